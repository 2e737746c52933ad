// QualityService (quality_service.h): construction, the shared helpers, and the ruleset
// operations. The result operations are in results.cc.
#include "quality/quality_service.h"

#include <algorithm>
#include <cmath>

#include "common/logging.h"
#include "common/strings.h"
#include "resource/arn.h"
#include "resource/paging.h"
#include "resource/request.h"
#include "resource/stored.h"
#include "resource/tags.h"
#include "quality/quality_store.h"
#include "quality/ruleset_text.h"

namespace openglue::quality {

namespace internal {

Result<std::optional<Json>> Load(store::Transaction* txn, std::string_view kind,
                                 const std::string& key, const std::string& what) {
  OG_ASSIGN_OR_RETURN(auto text, txn->Get(kind, key));
  if (!text) return std::optional<Json>();
  OG_ASSIGN_OR_RETURN(Json doc, resource::ParseStored(*text, what));
  return std::optional<Json>(std::move(doc));
}

Json Public(Json doc) {
  doc.erase("_og");
  return doc;
}

double Number(const Json& object, const char* member, double fallback) {
  if (!object.is_object()) return fallback;
  auto it = object.find(member);
  return it == object.end() || !it->is_number() ? fallback : it->get<double>();
}

bool TableMatches(const Json& table, const Json& wanted) {
  if (!table.is_object()) return false;
  for (const char* member : {"DatabaseName", "TableName", "CatalogId"}) {
    std::string want = resource::GetString(wanted, member);
    if (want.empty()) continue;
    if (resource::GetString(table, member) != want) return false;
  }
  return true;
}

std::string ResultKey(double started_on_seconds, const std::string& id) {
  constexpr int64_t kBase = 9999999999999LL;  // milliseconds: 13 digits
  int64_t ms = std::isfinite(started_on_seconds)
                   ? static_cast<int64_t>(std::llround(started_on_seconds * 1000.0)) : 0;
  std::string inverted = std::to_string(kBase - std::clamp<int64_t>(ms, 0, kBase));
  inverted.insert(0, 13 - std::min<size_t>(13, inverted.size()), '0');
  return store::MakeKey({inverted, id});
}

}  // namespace internal

using namespace internal;

namespace {

Status RulesetNotFound(const std::string& name) {
  return Status::EntityNotFound("Data quality ruleset " + name + " not found.");
}

// The members of a stored ruleset that GetDataQualityRuleset returns.
Json PresentRuleset(const Json& stored) {
  Json out = Json::object();
  for (const char* member : {"Name", "Description", "Ruleset", "TargetTable", "CreatedOn",
                             "LastModifiedOn", "RecommendationRunId",
                             "DataQualitySecurityConfiguration"})
    if (stored.contains(member) && !stored[member].is_null()) out[member] = stored[member];
  return out;
}

Json ListDetails(const Json& stored) {
  Json out = Json::object();
  for (const char* member : {"Name", "Description", "CreatedOn", "LastModifiedOn", "TargetTable",
                             "RecommendationRunId"})
    if (stored.contains(member) && !stored[member].is_null()) out[member] = stored[member];
  const Json& og = stored.contains("_og") ? stored["_og"] : Json::object();
  if (og.is_object() && og.contains("rule_count") && og["rule_count"].is_number_integer())
    out["RuleCount"] = og["rule_count"];
  return out;
}

}  // namespace

Status RulesetExists(store::Transaction* txn, const std::vector<std::string>& resource) {
  std::string name;
  for (size_t i = 1; i < resource.size(); ++i) name += (i > 1 ? "/" : "") + resource[i];
  if (!name.empty()) {
    OG_ASSIGN_OR_RETURN(auto doc, txn->Get(kRuleset, name));
    if (doc) return Status::OK();
  }
  return RulesetNotFound(name);
}

Result<std::unique_ptr<QualityService>> QualityService::Make(store::MetadataStore* store,
                                                             const Clock* clock, Random* random,
                                                             QualityOptions options,
                                                             jobs::JobService* jobs) {
  if (store == nullptr || clock == nullptr || random == nullptr)
    return Status::Internal("QualityService needs a store, a clock and a random source");
  return std::unique_ptr<QualityService>(
      new QualityService(store, clock, random, std::move(options), jobs));
}

const std::vector<std::pair<std::string, QualityService::Operation>>& QualityService::Operations() {
  static const std::vector<std::pair<std::string, Operation>> kOperations = {
      {"CreateDataQualityRuleset", &QualityService::CreateDataQualityRuleset},
      {"GetDataQualityRuleset", &QualityService::GetDataQualityRuleset},
      {"UpdateDataQualityRuleset", &QualityService::UpdateDataQualityRuleset},
      {"DeleteDataQualityRuleset", &QualityService::DeleteDataQualityRuleset},
      {"ListDataQualityRulesets", &QualityService::ListDataQualityRulesets},
      {"GetDataQualityResult", &QualityService::GetDataQualityResult},
      {"ListDataQualityResults", &QualityService::ListDataQualityResults},
      {"BatchGetDataQualityResult", &QualityService::BatchGetDataQualityResult},
      {"StartDataQualityRulesetEvaluationRun", &QualityService::StartDataQualityRulesetEvaluationRun},
      {"GetDataQualityRulesetEvaluationRun", &QualityService::GetDataQualityRulesetEvaluationRun},
      {"ListDataQualityRulesetEvaluationRuns", &QualityService::ListDataQualityRulesetEvaluationRuns},
      {"CancelDataQualityRulesetEvaluationRun", &QualityService::CancelDataQualityRulesetEvaluationRun},
      {"StartDataQualityRuleRecommendationRun", &QualityService::StartDataQualityRuleRecommendationRun},
      {"GetDataQualityRuleRecommendationRun", &QualityService::GetDataQualityRuleRecommendationRun},
      {"ListDataQualityRuleRecommendationRuns", &QualityService::ListDataQualityRuleRecommendationRuns},
      {"CancelDataQualityRuleRecommendationRun", &QualityService::CancelDataQualityRuleRecommendationRun},
      {"ListDataQualityStatistics", &QualityService::ListDataQualityStatistics},
      {"ListDataQualityStatisticAnnotations", &QualityService::ListDataQualityStatisticAnnotations},
      {"BatchPutDataQualityStatisticAnnotation", &QualityService::BatchPutDataQualityStatisticAnnotation},
      {"PutDataQualityProfileAnnotation", &QualityService::PutDataQualityProfileAnnotation},
  };
  return kOperations;
}

std::string QualityService::RulesetArn(const std::string& name) const {
  return resource::GlueArn(options_.region, options_.account_id, {"dataQualityRuleset", name});
}

std::string QualityService::NewResultId() {
  MutexLock lock(&random_mutex_);
  return "dqresult-" + random_->Hex(20);
}

std::string QualityService::NewRunId() { return NewId("dqrun-"); }

std::string QualityService::NewId(const std::string& prefix) {
  MutexLock lock(&random_mutex_);
  return prefix + random_->Hex(20);
}

Result<Json> QualityService::CreateDataQualityRuleset(const Json& request) {
  std::string name = resource::GetString(request, "Name");
  if (name.empty()) return Status::InvalidInput("A data quality ruleset needs a Name.");
  std::string text = resource::GetString(request, "Ruleset");
  OG_ASSIGN_OR_RETURN(int64_t rule_count, CheckRuleset(text));
  std::string client_token = resource::GetString(request, "ClientToken");
  double now = clock_->NowSeconds();
  Json ruleset{{"Name", name}, {"Ruleset", text}, {"CreatedOn", now}, {"LastModifiedOn", now}};
  for (const char* member : {"Description", "TargetTable", "DataQualitySecurityConfiguration"})
    if (request.contains(member) && !request[member].is_null()) ruleset[member] = request[member];
  ruleset["_og"] = Json{{"rule_count", rule_count}};
  if (!client_token.empty()) ruleset["_og"]["client_token"] = client_token;

  OG_ASSIGN_OR_RETURN(auto txn, store_->BeginWrite());
  OG_ASSIGN_OR_RETURN(auto existing, Load(txn.get(), kRuleset, name, "data quality ruleset " + name));
  if (existing) {
    // A retry of the request that created it (same ClientToken) succeeds again.
    if (!client_token.empty() &&
        resource::GetString(resource::GetObject(*existing, "_og"), "client_token") == client_token)
      return Json{{"Name", name}};
    return Status::AlreadyExists("Data quality ruleset with name " + name + " already exists.");
  }
  OG_RETURN_NOT_OK(txn->Insert(kRuleset, name, DumpJson(ruleset)));
  if (request.contains("Tags") && request["Tags"].is_object() && !request["Tags"].empty())
    OG_RETURN_NOT_OK(resource::AddTags(txn.get(), RulesetArn(name), request["Tags"]));
  OG_RETURN_NOT_OK(txn->Commit());
  OG_LOG(kInfo, "data quality ruleset " << name << " created (" << rule_count << " rules)");
  return Json{{"Name", name}};
}

Result<Json> QualityService::GetDataQualityRuleset(const Json& request) {
  std::string name = resource::GetString(request, "Name");
  OG_ASSIGN_OR_RETURN(auto txn, store_->BeginRead());
  OG_ASSIGN_OR_RETURN(auto ruleset, Load(txn.get(), kRuleset, name, "data quality ruleset " + name));
  if (!ruleset) return RulesetNotFound(name);
  return PresentRuleset(*ruleset);
}

Result<Json> QualityService::UpdateDataQualityRuleset(const Json& request) {
  std::string name = resource::GetString(request, "Name");
  std::optional<int64_t> rule_count;
  if (request.contains("Ruleset") && request["Ruleset"].is_string()) {
    OG_ASSIGN_OR_RETURN(int64_t count, CheckRuleset(request["Ruleset"].get<std::string>()));
    rule_count = count;
  }
  OG_ASSIGN_OR_RETURN(auto txn, store_->BeginWrite());
  OG_ASSIGN_OR_RETURN(auto ruleset, Load(txn.get(), kRuleset, name, "data quality ruleset " + name));
  if (!ruleset) return RulesetNotFound(name);
  if (request.contains("Description") && request["Description"].is_string())
    (*ruleset)["Description"] = request["Description"];
  if (rule_count) {
    (*ruleset)["Ruleset"] = request["Ruleset"];
    if (!(*ruleset)["_og"].is_object()) (*ruleset)["_og"] = Json::object();
    (*ruleset)["_og"]["rule_count"] = *rule_count;
  }
  (*ruleset)["LastModifiedOn"] = clock_->NowSeconds();
  OG_RETURN_NOT_OK(txn->Put(kRuleset, name, DumpJson(*ruleset)));
  OG_RETURN_NOT_OK(txn->Commit());
  Json response{{"Name", name}};
  for (const char* member : {"Description", "Ruleset"})
    if (ruleset->contains(member)) response[member] = (*ruleset)[member];
  return response;
}

Result<Json> QualityService::DeleteDataQualityRuleset(const Json& request) {
  std::string name = resource::GetString(request, "Name");
  OG_ASSIGN_OR_RETURN(auto txn, store_->BeginWrite());
  OG_ASSIGN_OR_RETURN(bool existed, txn->Delete(kRuleset, name));
  if (!existed) return RulesetNotFound(name);
  OG_RETURN_NOT_OK(resource::DeleteTags(txn.get(), RulesetArn(name)));
  OG_RETURN_NOT_OK(txn->Commit());
  OG_LOG(kInfo, "data quality ruleset " << name << " deleted");
  return Json::object();
}

Result<Json> QualityService::ListDataQualityRulesets(const Json& request) {
  const Json filter = resource::GetObject(request, "Filter");
  const Json wanted_tags = resource::GetObject(request, "Tags");
  OG_ASSIGN_OR_RETURN(auto txn, store_->BeginRead());
  auto keep = [&](const store::Row& row) -> Result<bool> {
    OG_ASSIGN_OR_RETURN(Json ruleset, resource::ParseStored(row.doc, "data quality ruleset " + row.key));
    for (const char* member : {"Name", "Description"})
      if (filter.contains(member) && filter[member].is_string() &&
          resource::GetString(ruleset, member) != filter[member].get<std::string>())
        return false;
    double created = Number(ruleset, "CreatedOn", 0), modified = Number(ruleset, "LastModifiedOn", 0);
    if (filter.contains("CreatedBefore") && !(created < Number(filter, "CreatedBefore", 0))) return false;
    if (filter.contains("CreatedAfter") && !(created > Number(filter, "CreatedAfter", 0))) return false;
    if (filter.contains("LastModifiedBefore") && !(modified < Number(filter, "LastModifiedBefore", 0)))
      return false;
    if (filter.contains("LastModifiedAfter") && !(modified > Number(filter, "LastModifiedAfter", 0)))
      return false;
    if (filter.contains("TargetTable") &&
        !TableMatches(resource::GetObject(ruleset, "TargetTable"), filter["TargetTable"]))
      return false;
    return resource::HasTags(txn.get(), RulesetArn(row.key), wanted_tags);
  };
  OG_ASSIGN_OR_RETURN(resource::Page page,
                      resource::ScanPage(txn.get(), kRuleset, "", request,
                                         resource::PageSize(request, 100), keep));
  Json rulesets = Json::array();
  for (const auto& row : page.rows) {
    OG_ASSIGN_OR_RETURN(Json ruleset, resource::ParseStored(row.doc, "data quality ruleset " + row.key));
    rulesets.push_back(ListDetails(ruleset));
  }
  Json response{{"Rulesets", std::move(rulesets)}};
  if (!page.next_token.empty()) response["NextToken"] = page.next_token;
  return response;
}

}  // namespace openglue::quality
