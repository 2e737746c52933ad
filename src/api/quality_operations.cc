#include "api/quality_operations.h"

#include <cctype>
#include <optional>
#include <utility>

namespace openglue::api {

quality::Publisher QualityPublisher(const RunAuthorizer* authorizer, const std::string& principal) {
  quality::Publisher publisher;
  if (principal.empty() || authorizer == nullptr || authorizer->IsAdministrator(principal))
    return publisher;
  if (std::optional<RunPrincipal> run = authorizer->FindRun(principal)) {
    publisher.is_run = true;
    publisher.job = run->job;
    publisher.run_id = run->run_id;
  }
  return publisher;
}

Status CheckPublishShapes(const ServiceModel& model, Json* request) {
  if (!request->is_object()) return Status::OK();  // the service says what is wrong
  // Member -> the model's shape for it (GetDataQualityResultResponse's, and the ruleset text's).
  static const std::pair<const char*, const char*> kShapes[] = {
      {"JobName", "NameString"},
      {"JobRunId", "HashString"},
      {"RulesetEvaluationRunId", "HashString"},
      {"RulesetName", "NameString"},
      {"Ruleset", "DataQualityRulesetString"},
      {"EvaluationContext", "GenericString"},
      {"Score", "GenericBoundedDouble"},
      {"StartedOn", "Timestamp"},  // ISO-8601 text becomes epoch seconds, as in Glue's requests
      {"CompletedOn", "Timestamp"},
      {"DataSource", "DataSource"},
      {"RuleResults", "DataQualityRuleResults"},
      {"AnalyzerResults", "DataQualityAnalyzerResults"},
      {"Observations", "DataQualityObservations"},
      {"AggregatedMetrics", "DataQualityAggregatedMetrics"},
  };
  for (const auto& [member, shape] : kShapes) {
    auto it = request->find(member);
    if (it == request->end()) continue;
    std::string path = member;
    path[0] = static_cast<char>(std::tolower(static_cast<unsigned char>(path[0])));
    Status checked = model.ValidateShape(shape, path, &*it);
    if (!checked.ok())
      return Status::InvalidInput(std::string(quality::kPublishOperation) + ": " + checked.message());
  }
  return Status::OK();
}

const std::vector<std::string>& DataQualityExtensionOperations() {
  static const std::vector<std::string> kNames = {quality::kPublishOperation,
                                                  quality::kRecommendationOperation};
  return kNames;
}

void RegisterDataQuality(Router* router, quality::QualityService* service,
                         const ServiceModel* model, const RunAuthorizer* authorizer) {
  for (const auto& [name, method] : quality::QualityService::Operations())
    router->RegisterGlue(name, [service, m = method](const Json& request) {
      return (service->*m)(request);
    });
  router->RegisterExtension(
      quality::kPublishOperation,
      [service, model, authorizer](const Json& request, const std::string& principal) -> Result<Json> {
        Json checked = request;
        if (model != nullptr) OG_RETURN_NOT_OK(CheckPublishShapes(*model, &checked));
        return service->PublishDataQualityResult(checked, QualityPublisher(authorizer, principal));
      });
  router->RegisterExtension(
      quality::kRecommendationOperation,
      [service, model, authorizer](const Json& request, const std::string& principal) -> Result<Json> {
        Json checked = request;
        if (model != nullptr && checked.is_object() && checked.contains("RecommendedRuleset")) {
          Status shape = model->ValidateShape("DataQualityRulesetString", "recommendedRuleset",
                                              &checked["RecommendedRuleset"]);
          if (!shape.ok())
            return Status::InvalidInput(std::string(quality::kRecommendationOperation) + ": " +
                                        shape.message());
        }
        return service->PutDataQualityRecommendation(checked, QualityPublisher(authorizer, principal));
      });
}

}  // namespace openglue::api
