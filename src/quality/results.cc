// The data-quality result operations of QualityService (quality_service.h).
#include <cmath>
#include <set>

#include "common/logging.h"
#include "resource/paging.h"
#include "resource/request.h"
#include "resource/stored.h"
#include "quality/quality_service.h"
#include "quality/quality_store.h"

namespace openglue::quality {

using namespace internal;

namespace {

const std::set<std::string> kPublishMembers = {
    "JobName", "JobRunId", "EvaluationContext", "RulesetName", "Ruleset", "Score", "StartedOn",
    "CompletedOn", "DataSource", "RuleResults", "AnalyzerResults", "Observations",
    "AggregatedMetrics", "RulesetEvaluationRunId"};
const std::set<std::string> kRuleResultStates = {"PASS", "FAIL", "ERROR"};

Status ResultNotFound(const std::string& id) {
  return Status::EntityNotFound("Data quality result " + id + " not found.");
}

Status Bad(const std::string& message) {
  return Status::InvalidInput(kPublishOperation + std::string(": ") + message);
}

// A JSON number that is finite.
bool FiniteNumber(const Json& value) {
  return value.is_number() && std::isfinite(value.get<double>());
}

// Checks the optional string `member` of `object` (at `path`): a string, non-empty when
// `non_empty`.
Status CheckString(const Json& object, const char* member, const std::string& path, bool non_empty) {
  auto it = object.find(member);
  if (it == object.end()) return Status::OK();
  if (!it->is_string()) return Bad(path + member + " must be a string.");
  if (non_empty && it->get_ref<const std::string&>().empty())
    return Bad(path + member + " must not be empty.");
  return Status::OK();
}

// A map of metric name -> number (EvaluatedMetrics, RuleMetrics).
Status CheckMetrics(const Json& object, const char* member, const std::string& path) {
  auto it = object.find(member);
  if (it == object.end()) return Status::OK();
  if (!it->is_object()) return Bad(path + member + " must be an object of metric name to number.");
  for (const auto& [name, value] : it->items())
    if (!FiniteNumber(value))
      return Bad(path + member + "." + name + " must be a number.");
  return Status::OK();
}

Status CheckRuleResult(const Json& rule, const std::string& path) {
  if (!rule.is_object()) return Bad(path + " must be an object (a DataQualityRuleResult).");
  std::string at = path + ".";
  for (const char* member : {"Name", "Description", "EvaluationMessage", "EvaluatedRule"})
    OG_RETURN_NOT_OK(CheckString(rule, member, at, false));
  auto result = rule.find("Result");
  if (result == rule.end() || !result->is_string())
    return Bad(at + "Result is required: PASS, FAIL or ERROR.");
  if (!kRuleResultStates.count(result->get<std::string>()))
    return Bad(at + "Result must be PASS, FAIL or ERROR, not " + result->get<std::string>() + ".");
  OG_RETURN_NOT_OK(CheckMetrics(rule, "EvaluatedMetrics", at));
  OG_RETURN_NOT_OK(CheckMetrics(rule, "RuleMetrics", at));
  auto labels = rule.find("Labels");
  if (labels != rule.end()) {
    if (!labels->is_object()) return Bad(at + "Labels must be an object of strings.");
    for (const auto& [name, value] : labels->items())
      if (!value.is_string()) return Bad(at + "Labels." + name + " must be a string.");
  }
  return Status::OK();
}

Status CheckDataSource(const Json& request) {
  auto source = request.find("DataSource");
  if (source == request.end()) return Status::OK();
  if (!source->is_object()) return Bad("DataSource must be an object ({\"GlueTable\": {...}}).");
  int tables = 0;
  for (const char* kind : {"GlueTable", "DataQualityGlueTable"}) {
    auto table = source->find(kind);
    if (table == source->end()) continue;
    ++tables;
    std::string at = std::string("DataSource.") + kind;
    if (!table->is_object()) return Bad(at + " must be an object.");
    for (const char* member : {"DatabaseName", "TableName"}) {
      if (!table->contains(member)) return Bad(at + "." + member + " is required.");
      OG_RETURN_NOT_OK(CheckString(*table, member, at + ".", true));
    }
  }
  if (tables == 0) return Bad("DataSource must name a GlueTable.");
  return Status::OK();
}

Status CheckPublish(const Json& request) {
  if (!request.is_object()) return Bad("the request must be a JSON object.");
  for (const auto& [member, value] : request.items())
    if (!kPublishMembers.count(member)) return Bad("unknown member " + member + ".");
  for (const char* member : {"JobName", "JobRunId", "RulesetName", "RulesetEvaluationRunId"})
    OG_RETURN_NOT_OK(CheckString(request, member, "", true));
  for (const char* member : {"EvaluationContext", "Ruleset"})
    OG_RETURN_NOT_OK(CheckString(request, member, "", false));
  auto score = request.find("Score");
  if (score == request.end()) return Bad("Score is required (a number from 0 to 1).");
  if (!FiniteNumber(*score) || score->get<double>() < 0 || score->get<double>() > 1)
    return Bad("Score must be a number from 0 to 1, not " + DumpJson(*score) + ".");
  for (const char* member : {"StartedOn", "CompletedOn"}) {
    auto it = request.find(member);
    if (it == request.end()) return Bad(std::string(member) + " is required (epoch seconds).");
    if (!FiniteNumber(*it) || it->get<double>() < 0)
      return Bad(std::string(member) + " must be a number of seconds since the epoch, not " +
                 DumpJson(*it) + ".");
  }
  if (request["CompletedOn"].get<double>() < request["StartedOn"].get<double>())
    return Bad("CompletedOn is before StartedOn.");
  OG_RETURN_NOT_OK(CheckDataSource(request));
  auto rules = request.find("RuleResults");
  if (rules == request.end()) return Bad("RuleResults is required (a list, may be empty).");
  if (!rules->is_array()) return Bad("RuleResults must be a list of DataQualityRuleResult.");
  for (size_t i = 0; i < rules->size(); ++i)
    OG_RETURN_NOT_OK(CheckRuleResult((*rules)[i], "RuleResults[" + std::to_string(i) + "]"));
  for (const char* member : {"AnalyzerResults", "Observations"})
    if (request.contains(member) && !request[member].is_array())
      return Bad(std::string(member) + " must be a list.");
  if (request.contains("AggregatedMetrics") && !request["AggregatedMetrics"].is_object())
    return Bad("AggregatedMetrics must be an object.");
  return Status::OK();
}

Json Description(const Json& stored) {
  Json out = Json::object();
  for (const char* member : {"ResultId", "DataSource", "JobName", "JobRunId", "StartedOn"})
    if (stored.contains(member)) out[member] = stored[member];
  return out;
}

// Whether the DataSource of a result matches the filter's DataSource.
bool SourceMatches(const Json& source, const Json& wanted) {
  for (const char* kind : {"GlueTable", "DataQualityGlueTable"}) {
    if (!wanted.contains(kind)) continue;
    const Json& want = wanted[kind];
    bool found = false;
    for (const char* have : {"GlueTable", "DataQualityGlueTable"})
      if (source.contains(have) && TableMatches(source[have], want)) found = true;
    if (!found) return false;
  }
  return true;
}

}  // namespace

Result<Json> QualityService::PublishDataQualityResult(const Json& request,
                                                      const Publisher& publisher) {
  OG_RETURN_NOT_OK(CheckPublish(request));
  Json result = Json::object();
  for (const auto& [member, value] : request.items())
    if (member != "Ruleset") result[member] = value;
  std::string evaluation_run = resource::GetString(request, "RulesetEvaluationRunId");
  if (publisher.is_run && publisher.job == kEvaluationOwner) {
    // An evaluation run publishes its own results, as an evaluation run (not a job run).
    for (const char* member : {"JobName", "JobRunId"})
      if (request.contains(member))
        return Status(StatusCode::kAccessDenied,
                      std::string(kPublishOperation) + ": data quality evaluation run " +
                          publisher.run_id + " publishes its results without " + member + ".");
    if (!evaluation_run.empty() && evaluation_run != publisher.run_id)
      return Status(StatusCode::kAccessDenied,
                    std::string(kPublishOperation) + ": data quality evaluation run " + publisher.run_id +
                        " publishes its own results only, not those of " + evaluation_run + ".");
    evaluation_run = publisher.run_id;
    result["RulesetEvaluationRunId"] = evaluation_run;
  } else if (publisher.is_run && publisher.job == kRecommendationOwner) {
    return Status(StatusCode::kAccessDenied,
                  std::string(kPublishOperation) + ": a rule recommendation run publishes no results.");
  } else if (publisher.is_run && !evaluation_run.empty()) {
    return Status(StatusCode::kAccessDenied,
                  std::string(kPublishOperation) + ": job run " + publisher.run_id +
                      " cannot publish the results of evaluation run " + evaluation_run + ".");
  }
  if (publisher.is_run && publisher.job != kEvaluationOwner) {
    // A run publishes its own results only.
    const std::pair<const char*, std::string> owns[] = {{"JobName", publisher.job},
                                                        {"JobRunId", publisher.run_id}};
    for (const auto& [member, own] : owns) {
      std::string given = resource::GetString(request, member);
      if (!given.empty() && given != own)
        return Status(StatusCode::kAccessDenied,
                      std::string(kPublishOperation) + ": job run " + publisher.run_id + " of job " +
                          publisher.job + " publishes data quality results as its own run only, "
                          "not with " + member + " " + given + ".");
      result[member] = own;
    }
  }
  std::string id = NewResultId();
  result["ResultId"] = id;
  Json og{{"published_on", clock_->NowSeconds()}};
  if (request.contains("Ruleset")) og["ruleset"] = request["Ruleset"];
  result["_og"] = std::move(og);
  std::string key = ResultKey(Number(request, "StartedOn", 0), id);
  OG_ASSIGN_OR_RETURN(auto txn, store_->BeginWrite());
  if (!evaluation_run.empty()) {
    // The run lists the results it published (GetDataQualityRulesetEvaluationRun's ResultIds).
    OG_ASSIGN_OR_RETURN(auto run_key, txn->Get(kEvaluationRunId, evaluation_run));
    if (!run_key)
      return Status::EntityNotFound("Data quality ruleset evaluation run " + evaluation_run + " not found.");
    OG_ASSIGN_OR_RETURN(auto run, Load(txn.get(), kEvaluationRun, *run_key,
                                       "data quality ruleset evaluation run " + evaluation_run));
    if (!run)
      return Status::EntityNotFound("Data quality ruleset evaluation run " + evaluation_run + " not found.");
    if (!(*run)["ResultIds"].is_array()) (*run)["ResultIds"] = Json::array();
    (*run)["ResultIds"].push_back(id);
    OG_RETURN_NOT_OK(txn->Put(kEvaluationRun, *run_key, DumpJson(*run)));
  }
  OG_RETURN_NOT_OK(RecordStatistics(txn.get(), &result));
  OG_RETURN_NOT_OK(txn->Insert(kResult, key, DumpJson(result)));
  OG_RETURN_NOT_OK(txn->Insert(kResultId, id, key));
  OG_RETURN_NOT_OK(txn->Commit());
  OG_LOG(kInfo, "data quality result " << id << " published (score " << request["Score"].get<double>()
                                        << ", " << request["RuleResults"].size() << " rules"
                                        << (result.contains("JobRunId")
                                                ? ", job run " + result["JobRunId"].get<std::string>()
                                                : std::string())
                                        << ")");
  return Json{{"ResultId", id}};
}

namespace {

Result<std::optional<Json>> LoadResult(store::Transaction* txn, const std::string& id) {
  OG_ASSIGN_OR_RETURN(auto key, txn->Get(kResultId, id));
  if (!key) return std::optional<Json>();
  return Load(txn, kResult, *key, "data quality result " + id);
}

}  // namespace

Result<Json> QualityService::GetDataQualityResult(const Json& request) {
  std::string id = resource::GetString(request, "ResultId");
  OG_ASSIGN_OR_RETURN(auto txn, store_->BeginRead());
  OG_ASSIGN_OR_RETURN(auto result, LoadResult(txn.get(), id));
  if (!result) return ResultNotFound(id);
  return Public(std::move(*result));
}

Result<Json> QualityService::ListDataQualityResults(const Json& request) {
  const Json filter = resource::GetObject(request, "Filter");
  OG_ASSIGN_OR_RETURN(auto txn, store_->BeginRead());
  auto keep = [&](const store::Row& row) -> Result<bool> {
    OG_ASSIGN_OR_RETURN(Json result, resource::ParseStored(row.doc, "data quality result " + row.key));
    for (const char* member : {"JobName", "JobRunId"})
      if (filter.contains(member) && filter[member].is_string() &&
          resource::GetString(result, member) != filter[member].get<std::string>())
        return false;
    double started = Number(result, "StartedOn", 0);
    if (filter.contains("StartedAfter") && !(started > Number(filter, "StartedAfter", 0))) return false;
    if (filter.contains("StartedBefore") && !(started < Number(filter, "StartedBefore", 0))) return false;
    if (filter.contains("DataSource") &&
        !SourceMatches(resource::GetObject(result, "DataSource"), resource::GetObject(filter, "DataSource")))
      return false;
    return true;
  };
  OG_ASSIGN_OR_RETURN(resource::Page page,
                      resource::ScanPage(txn.get(), kResult, "", request,
                                         resource::PageSize(request, 100), keep));
  Json results = Json::array();
  for (const auto& row : page.rows) {
    OG_ASSIGN_OR_RETURN(Json result, resource::ParseStored(row.doc, "data quality result " + row.key));
    results.push_back(Description(result));
  }
  Json response{{"Results", std::move(results)}};
  if (!page.next_token.empty()) response["NextToken"] = page.next_token;
  return response;
}

Result<Json> QualityService::BatchGetDataQualityResult(const Json& request) {
  OG_ASSIGN_OR_RETURN(auto txn, store_->BeginRead());
  Json results = Json::array(), missing = Json::array();
  std::set<std::string> seen;
  auto ids = request.find("ResultIds");
  if (ids != request.end() && ids->is_array()) {
    for (const Json& id : *ids) {
      if (!id.is_string() || !seen.insert(id.get<std::string>()).second) continue;
      OG_ASSIGN_OR_RETURN(auto result, LoadResult(txn.get(), id.get<std::string>()));
      if (result) results.push_back(Public(std::move(*result)));
      else missing.push_back(id);
    }
  }
  // ResultsNotFound is always there, empty when every id was found (as BatchGetTriggers and the
  // other batch reads answer), though the model's list has min 1.
  return Json{{"Results", std::move(results)}, {"ResultsNotFound", std::move(missing)}};
}

}  // namespace openglue::quality
