// ServiceModel: a botocore service model (service-2.json, embedded at build time: Glue's and
// CloudWatch Logs') and the request validation it drives.
//
// Validate() checks a request document against the operation's input shape the way AWS's
// front end does: a member of the wrong JSON type is a SerializationException; a missing
// required member or a value outside the model's limits (string length, numeric range, list
// and map sizes, enum values) is a ValidationException listing every violation in AWS's
// "N validation errors detected: Value X at 'path' failed to satisfy constraint: ..." form.
// Members the model does not know are removed from the request, as AWS ignores them.
// Timestamps given as ISO-8601 strings are normalized in place to epoch seconds.
//
// Thread-safe after Make().
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "common/json.h"
#include "common/status.h"

namespace openglue::api {

class ServiceModel {
 public:
  // Parses the embedded Glue model. Internal if it is corrupt (a build problem).
  static Result<std::unique_ptr<ServiceModel>> MakeEmbedded();
  // Parses the embedded CloudWatch Logs model (Logs_20140328).
  static Result<std::unique_ptr<ServiceModel>> MakeEmbeddedLogs();
  // Parses a model document (for tests).
  static Result<std::unique_ptr<ServiceModel>> Make(const std::string& model_json);

  bool HasOperation(const std::string& operation) const;
  // Every operation name in the model, sorted.
  std::vector<std::string> OperationNames() const;
  // Validates and normalizes `request` for `operation` (which must exist).
  Status Validate(const std::string& operation, Json* request) const;
  // Validates and normalizes `value` against the model's shape `shape` (e.g. "DataSource") as
  // a member at `path` of a request: the same checks and errors as Validate. For extension
  // operations, whose members reuse the model's shapes. An unknown shape checks nothing.
  Status ValidateShape(const std::string& shape, const std::string& path, Json* value) const;

 private:
  explicit ServiceModel(Json model) : model_(std::move(model)) {}
  Json model_;
};

}  // namespace openglue::api
