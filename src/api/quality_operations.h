// The data-quality operations on the wire: Glue's ruleset, result and run operations
// (quality/quality_service.h) and the OpenGlue extension operations
// OpenGluePublishDataQualityResult, by which a run's data-quality evaluation publishes its
// result, and OpenGluePutDataQualityRecommendation, by which a recommendation run reports its
// ruleset. The api module knows who signed a request: a run's credential publishes as its run
// (quality::Publisher); a configured credential, or a server without auth, publishes as given.
//
// The extension's members are checked twice: here against the service model's shapes they
// share with GetDataQualityResult (lengths, enums, nested members; unknown nested members are
// dropped as Glue's front end drops them), then by the service (types, required members, Score
// range, CompletedOn >= StartedOn). Every failure is InvalidInputException.
#pragma once

#include <string>
#include <vector>

#include "api/authorizer.h"
#include "api/router.h"
#include "api/service_model.h"
#include "quality/quality_service.h"

namespace openglue::api {

// The Publisher that `principal` stands for. `authorizer` may be null (nobody is a run then).
quality::Publisher QualityPublisher(const RunAuthorizer* authorizer, const std::string& principal);

// Checks the members of an OpenGluePublishDataQualityResult request against `model`'s shapes,
// normalizing them in place. InvalidInput naming the member.
Status CheckPublishShapes(const ServiceModel& model, Json* request);

// Registers Glue's data-quality operations (QualityService::Operations) and the two
// extensions on `router`. Borrowed: all three must outlive the router; `authorizer` may be
// null.
void RegisterDataQuality(Router* router, quality::QualityService* service,
                         const ServiceModel* model, const RunAuthorizer* authorizer);

// The names of the extension operations RegisterDataQuality adds (for `openglue operations`).
const std::vector<std::string>& DataQualityExtensionOperations();

}  // namespace openglue::api
