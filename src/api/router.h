// Router: the operation table. Maps `X-Amz-Target` values (and the query protocol's `Action`s)
// onto handlers, validates request bodies against the service model, and turns results and
// errors into wire responses. Knows nothing of sockets: the HTTP server hands it a target and a
// body.
//
// Thread-safe after setup (Register* before the server starts).
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "api/service_model.h"
#include "catalog/catalog.h"
#include "jobs/job_service.h"
#include "logs/log_store.h"
#include "common/json.h"
#include "common/status.h"

namespace openglue::api {

struct WireResponse {
  int http_status = 200;
  std::string body;            // JSON (XML for a query-protocol operation)
  std::string content_type{};  // empty: application/x-amz-json-1.1
};

class Router {
 public:
  using Handler = std::function<Result<Json>(const Json& request)>;
  // A handler that also receives the principal that signed the request ("" without auth).
  using PrincipalHandler =
      std::function<Result<Json>(const Json& request, const std::string& principal)>;
  // Decides whether `principal` (the access key id that signed the request; empty when the
  // server runs without auth) may call `action` ("glue:GetTable", "logs:GetLogEvents").
  // Returns OK or an AccessDenied status whose message names the action.
  using Authorizer = std::function<Status(const std::string& principal, const std::string& action)>;

  // `model` is Glue's service model; `logs_model` CloudWatch Logs' (Logs requests are validated
  // against it when given). Both borrowed.
  explicit Router(const ServiceModel* model, const ServiceModel* logs_model = nullptr)
      : model_(model), logs_model_(logs_model) {}

  // Registers a Glue operation (X-Amz-Target "AWSGlue.<name>").
  void RegisterGlue(const std::string& name, Handler handler);
  // The same, for a handler that needs the principal (validated against the model as well).
  void RegisterGlueWithPrincipal(const std::string& name, PrincipalHandler handler);
  // Registers an OpenGlue extension operation (X-Amz-Target "AWSGlue.<name>", e.g.
  // OpenGlueCommitJobBookmark): not in the service model, so the router only checks that the
  // body is a JSON object (SerializationException otherwise) and authorizes "glue:<name>"; the
  // handler validates the members itself.
  void RegisterExtension(const std::string& name, PrincipalHandler handler);
  // Registers every catalog operation.
  void RegisterCatalog(catalog::Catalog* catalog);
  // Registers the job and job-run operations.
  void RegisterJobs(jobs::JobService* jobs);
  // Registers the CloudWatch Logs subset (X-Amz-Target "Logs_20140328.<name>"). Its errors use
  // CloudWatch's names: ResourceNotFoundException, InvalidParameterException,
  // SerializationException.
  // May be called once per store; each store serves its own log groups.
  void RegisterLogs(logs::LogStore* logs);

  // A query-protocol operation (IAM, STS: a form-encoded body `Action=<name>&Version=...&...`,
  // answered in XML). `params` are the decoded form fields; the handler returns the XML content
  // of the <name>Result element, or a Status that becomes an <ErrorResponse>.
  using QueryParams = std::map<std::string, std::string>;
  using QueryHandler =
      std::function<Result<std::string>(const QueryParams& params, const std::string& principal)>;
  struct QueryOperation {
    std::string service;   // "iam", "sts": authorized as "<service>:<action>"
    std::string version;   // the API version clients send ("2010-05-08")
    std::string xmlns;     // the responses' namespace
    bool authorize = true; // false: no permission needed (sts:GetCallerIdentity, as in AWS)
    QueryHandler handler;
  };
  void RegisterQuery(const std::string& action, QueryOperation operation);

  // Installs the authorizer consulted for every known operation before its body is decoded.
  // Without one every authenticated principal may call everything.
  void SetAuthorizer(Authorizer authorizer) { authorizer_ = std::move(authorizer); }

  bool Implements(const std::string& operation) const { return glue_.count(operation) > 0; }
  // The registered extension operations, sorted.
  std::vector<std::string> ExtensionOperations() const;

  // Handles one request signed by `principal`. Never throws: a handler's exception becomes
  // InternalServiceException.
  WireResponse Handle(const std::string& target, const std::string& body,
                      const std::string& principal = "") const;

  static WireResponse ErrorResponse(const Status& status);

  // Handles one query-protocol request (a POST without X-Amz-Target whose body is form-encoded).
  // Errors are query-protocol XML: MissingAction, InvalidAction (an action not registered, or
  // another Version), AccessDenied, ValidationError, NoSuchEntity, ServiceFailure. Never throws.
  WireResponse HandleQuery(const std::string& body, const std::string& principal) const;
  // The query-protocol <ErrorResponse> for `status` (also for a request refused before routing).
  static WireResponse QueryErrorResponse(const Status& status, const std::string& xmlns = "");

 private:
  WireResponse HandleLogs(const std::string& operation, const std::string& body,
                          const std::string& principal) const;

  const ServiceModel* model_;
  const ServiceModel* logs_model_;
  // A handler that returns its response body already serialized (as DumpJson would).
  using SerializedHandler = std::function<Result<std::string>(const Json& request)>;
  struct GlueOperation {
    PrincipalHandler handler;
    bool extension = false;  // not in the model: not validated against it
    SerializedHandler serialized;  // when set, used instead of `handler`
  };
  std::map<std::string, GlueOperation> glue_;
  std::map<std::string, Handler> logs_;
  std::map<std::string, QueryOperation> query_;
  std::vector<logs::LogStore*> log_stores_;
  Authorizer authorizer_;
};

}  // namespace openglue::api
