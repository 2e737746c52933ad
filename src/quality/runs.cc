// The data-quality run operations of QualityService (quality_service.h): ruleset evaluation runs
// and rule recommendation runs. Each run is a quality record (what was asked, the results it
// published, the ruleset it recommended) beside a module run of the job service (its process,
// state, times, timeout, stop and recovery: jobs::JobService::StartModuleRun), found by the
// same run id.
#include <set>

#include "common/logging.h"
#include "jobs/job_run_state.h"
#include "quality/quality_service.h"
#include "quality/quality_store.h"
#include "quality/ruleset_text.h"
#include "resource/paging.h"
#include "resource/request.h"
#include "resource/stored.h"

namespace openglue::quality {

using namespace internal;

namespace {

struct RunKind {
  std::string_view records;  // key (newest first) -> record
  std::string_view ids;      // run id -> key
  const char* owner;         // the job name of its module run
  const char* what;          // for messages
};

const RunKind kEvaluation{kEvaluationRun, kEvaluationRunId, kEvaluationOwner,
                          "Data quality ruleset evaluation run"};
const RunKind kRecommendation{kRecommendationRun, kRecommendationRunId, kRecommendationOwner,
                              "Data quality rule recommendation run"};

Status RunNotFound(const RunKind& kind, const std::string& id) {
  return Status::EntityNotFound(std::string(kind.what) + " " + id + " not found.");
}

// The GlueTable (or DataQualityGlueTable) of a DataSource, or an empty object.
Json SourceTable(const Json& source) {
  for (const char* member : {"GlueTable", "DataQualityGlueTable"}) {
    Json table = resource::GetObject(source, member);
    if (!table.empty()) return table;
  }
  return Json::object();
}

// TaskStatusType of a module run's JobRunState.
std::string TaskStatus(const std::string& job_state) {
  std::optional<jobs::JobRunState> state = jobs::ParseJobRunState(job_state);
  if (!state) return "FAILED";
  switch (*state) {
    case jobs::JobRunState::kWaiting:
    case jobs::JobRunState::kStarting: return "STARTING";
    case jobs::JobRunState::kRunning: return "RUNNING";
    case jobs::JobRunState::kStopping: return "STOPPING";
    case jobs::JobRunState::kStopped: return "STOPPED";
    case jobs::JobRunState::kSucceeded: return "SUCCEEDED";
    case jobs::JobRunState::kTimeout: return "TIMEOUT";
    default: return "FAILED";
  }
}

Result<std::optional<Json>> LoadRun(store::Transaction* txn, const RunKind& kind, const std::string& id,
                                    std::string* key_out = nullptr) {
  OG_ASSIGN_OR_RETURN(auto key, txn->Get(kind.ids, id));
  if (!key) return std::optional<Json>();
  if (key_out != nullptr) *key_out = *key;
  return Load(txn, kind.records, *key, std::string(kind.what) + " " + id);
}

// The stored record with the module run's state, times and error merged in.
Result<Json> WithState(store::Transaction* txn, Json record) {
  std::string id = resource::GetString(record, "RunId");
  OG_ASSIGN_OR_RETURN(auto facts, jobs::FindJobRun(txn, id));
  if (!facts) {
    // The record was written but the server stopped before its run was: it never ran.
    record["Status"] = "FAILED";
    record["ErrorString"] = "The run was never started (the server stopped while starting it).";
    return record;
  }
  record["Status"] = TaskStatus(facts->state);
  if (facts->last_modified_on > 0) record["LastModifiedOn"] = facts->last_modified_on;
  if (facts->completed_on > 0) record["CompletedOn"] = facts->completed_on;
  record["ExecutionTime"] = facts->execution_time;
  if (!facts->error_message.empty()) record["ErrorString"] = facts->error_message;
  return record;
}

}  // namespace

Status QualityService::CheckSource(const Json& source, const char* member) const {
  Json table = SourceTable(source);
  if (table.empty())
    return Status::InvalidInput(std::string(member) + " must name a GlueTable (DatabaseName, TableName).");
  if (!options_.table_exists) return Status::OK();
  return options_.table_exists(table);
}

Result<std::string> QualityService::StartRun(bool evaluation, const Json& request, Json record,
                                              Json spec) {
  const RunKind& kind = evaluation ? kEvaluation : kRecommendation;
  if (jobs_ == nullptr) return Status::Internal("data-quality runs need the job service");
  std::string token = resource::GetString(request, "ClientToken");
  std::string token_key = store::MakeKey({kind.owner, token});
  if (!token.empty()) {
    // A retried Start (same ClientToken) answers the run it started.
    OG_ASSIGN_OR_RETURN(auto txn, store_->BeginRead());
    OG_ASSIGN_OR_RETURN(auto existing, txn->Get(kRunToken, token_key));
    if (existing) return *existing;
  }
  std::string id = NewRunId();
  double now = clock_->NowSeconds();
  int64_t timeout = resource::GetInt(request, "Timeout", kDefaultRunTimeoutMinutes);
  if (timeout < 1) return Status::InvalidInput("Timeout must be at least 1 minute.");
  record["RunId"] = id;
  record["StartedOn"] = now;
  record["LastModifiedOn"] = now;
  record["Timeout"] = timeout;
  record["Role"] = request["Role"];
  for (const char* member : {"DataSource", "NumberOfWorkers"})
    if (request.contains(member) && !request[member].is_null()) record[member] = request[member];
  std::string key = ResultKey(now, id);
  {
    OG_ASSIGN_OR_RETURN(auto txn, store_->BeginWrite());
    OG_RETURN_NOT_OK(txn->Insert(kind.records, key, DumpJson(record)));
    OG_RETURN_NOT_OK(txn->Insert(kind.ids, id, key));
    if (!token.empty()) OG_RETURN_NOT_OK(txn->Put(kRunToken, token_key, id));
    OG_RETURN_NOT_OK(txn->Commit());
  }
  spec["RunId"] = id;
  spec["Kind"] = evaluation ? "evaluation" : "recommendation";
  spec["DataSource"] = record["DataSource"];
  jobs::ModuleRun run;
  run.owner = kind.owner;
  run.run_id = id;
  run.module = kRunModule;
  run.spec = std::move(spec);
  run.role = resource::GetString(request, "Role");
  run.timeout_minutes = timeout;
  Status started = jobs_->StartModuleRun(run);
  if (!started.ok()) {
    // Nothing runs: the record goes again, so no run is left that never started.
    auto txn = store_->BeginWrite();
    if (txn.ok()) {
      (void)(*txn)->Delete(kind.records, key);
      (void)(*txn)->Delete(kind.ids, id);
      if (!token.empty()) (void)(*txn)->Delete(kRunToken, token_key);
      (void)(*txn)->Commit();
    }
    return started;
  }
  OG_LOG(kInfo, kind.what << " " << id << " started");
  return id;
}

Result<Json> QualityService::StartDataQualityRulesetEvaluationRun(const Json& request) {
  const Json source = resource::GetObject(request, "DataSource");
  OG_RETURN_NOT_OK(CheckSource(source, "DataSource"));
  const Json additional = resource::GetObject(request, "AdditionalDataSources");
  for (const auto& [alias, other] : additional.items())
    OG_RETURN_NOT_OK(CheckSource(other, ("AdditionalDataSources." + alias).c_str()));
  Json names = request.contains("RulesetNames") && request["RulesetNames"].is_array()
                   ? request["RulesetNames"] : Json::array();
  if (names.empty()) return Status::InvalidInput("RulesetNames must name at least one ruleset.");
  {
    // Every ruleset must exist now: an unknown one is refused before a run exists.
    OG_ASSIGN_OR_RETURN(auto txn, store_->BeginRead());
    std::set<std::string> seen;
    for (const Json& name : names) {
      std::string text = name.is_string() ? name.get<std::string>() : "";
      if (!seen.insert(text).second)
        return Status::InvalidInput("RulesetNames names " + text + " twice.");
      OG_ASSIGN_OR_RETURN(auto ruleset, txn->Get(kRuleset, text));
      if (!ruleset) return Status::EntityNotFound("Data quality ruleset " + text + " not found.");
    }
  }
  Json record{{"RulesetNames", names}, {"ResultIds", Json::array()}};
  for (const char* member : {"AdditionalRunOptions", "AdditionalDataSources"})
    if (request.contains(member) && !request[member].is_null()) record[member] = request[member];
  Json spec{{"RulesetNames", names},
            {"AdditionalDataSources", additional},
            {"AdditionalRunOptions", resource::GetObject(request, "AdditionalRunOptions")}};
  OG_ASSIGN_OR_RETURN(std::string id, StartRun(true, request, std::move(record), std::move(spec)));
  return Json{{"RunId", id}};
}

Result<Json> QualityService::StartDataQualityRuleRecommendationRun(const Json& request) {
  OG_RETURN_NOT_OK(CheckSource(resource::GetObject(request, "DataSource"), "DataSource"));
  std::string created = resource::GetString(request, "CreatedRulesetName");
  if (!created.empty()) {
    OG_ASSIGN_OR_RETURN(auto txn, store_->BeginRead());
    OG_ASSIGN_OR_RETURN(auto existing, txn->Get(kRuleset, created));
    if (existing)
      return Status::AlreadyExists("Data quality ruleset with name " + created + " already exists.");
  }
  Json record = Json::object();
  for (const char* member : {"CreatedRulesetName", "DataQualitySecurityConfiguration"})
    if (request.contains(member) && !request[member].is_null()) record[member] = request[member];
  OG_ASSIGN_OR_RETURN(std::string id, StartRun(false, request, std::move(record), Json::object()));
  return Json{{"RunId", id}};
}

Result<Json> QualityService::GetRun(bool evaluation, const Json& request) {
  const RunKind& kind = evaluation ? kEvaluation : kRecommendation;
  std::string id = resource::GetString(request, "RunId");
  OG_ASSIGN_OR_RETURN(auto txn, store_->BeginRead());
  OG_ASSIGN_OR_RETURN(auto record, LoadRun(txn.get(), kind, id));
  if (!record) return RunNotFound(kind, id);
  return WithState(txn.get(), Public(std::move(*record)));
}

Result<Json> QualityService::GetDataQualityRulesetEvaluationRun(const Json& request) {
  return GetRun(true, request);
}

Result<Json> QualityService::GetDataQualityRuleRecommendationRun(const Json& request) {
  return GetRun(false, request);
}

Result<Json> QualityService::ListRuns(bool evaluation, const Json& request) {
  const RunKind& kind = evaluation ? kEvaluation : kRecommendation;
  const Json filter = resource::GetObject(request, "Filter");
  OG_ASSIGN_OR_RETURN(auto txn, store_->BeginRead());
  auto keep = [&](const store::Row& row) -> Result<bool> {
    OG_ASSIGN_OR_RETURN(Json record, resource::ParseStored(row.doc, std::string(kind.what) + " " + row.key));
    double started = Number(record, "StartedOn", 0);
    if (filter.contains("StartedAfter") && !(started > Number(filter, "StartedAfter", 0))) return false;
    if (filter.contains("StartedBefore") && !(started < Number(filter, "StartedBefore", 0))) return false;
    if (filter.contains("DataSource")) {
      Json wanted = SourceTable(resource::GetObject(filter, "DataSource"));
      if (!wanted.empty() && !TableMatches(SourceTable(resource::GetObject(record, "DataSource")), wanted))
        return false;
    }
    return true;
  };
  OG_ASSIGN_OR_RETURN(resource::Page page,
                      resource::ScanPage(txn.get(), kind.records, "", request,
                                         resource::PageSize(request, 100), keep));
  Json runs = Json::array();
  for (const auto& row : page.rows) {
    OG_ASSIGN_OR_RETURN(Json record, resource::ParseStored(row.doc, std::string(kind.what) + " " + row.key));
    OG_ASSIGN_OR_RETURN(Json full, WithState(txn.get(), std::move(record)));
    Json item = Json::object();
    for (const char* member : {"RunId", "Status", "StartedOn", "DataSource"})
      if (full.contains(member)) item[member] = full[member];
    runs.push_back(std::move(item));
  }
  Json response{{"Runs", std::move(runs)}};
  if (!page.next_token.empty()) response["NextToken"] = page.next_token;
  return response;
}

Result<Json> QualityService::ListDataQualityRulesetEvaluationRuns(const Json& request) {
  return ListRuns(true, request);
}

Result<Json> QualityService::ListDataQualityRuleRecommendationRuns(const Json& request) {
  return ListRuns(false, request);
}

Result<Json> QualityService::CancelRun(bool evaluation, const Json& request) {
  const RunKind& kind = evaluation ? kEvaluation : kRecommendation;
  std::string id = resource::GetString(request, "RunId");
  {
    OG_ASSIGN_OR_RETURN(auto txn, store_->BeginRead());
    OG_ASSIGN_OR_RETURN(auto record, LoadRun(txn.get(), kind, id));
    if (!record) return RunNotFound(kind, id);
  }
  if (jobs_ == nullptr) return Status::Internal("data-quality runs need the job service");
  OG_ASSIGN_OR_RETURN(Json stopped,
                      jobs_->BatchStopJobRun(Json{{"JobName", kind.owner}, {"JobRunIds", {id}}}));
  const Json errors = stopped.contains("Errors") ? stopped["Errors"] : Json::array();
  if (!errors.empty()) {
    std::string code = resource::GetString(resource::GetObject(errors[0], "ErrorDetail"), "ErrorCode");
    if (code == "EntityNotFoundException")
      return Status::InvalidInput(std::string(kind.what) + " " + id + " was never started.");
    return Status::InvalidInput(std::string(kind.what) + " " + id +
                                " has already finished and cannot be cancelled.");
  }
  OG_LOG(kInfo, kind.what << " " << id << " cancelled");
  return Json::object();
}

Result<Json> QualityService::CancelDataQualityRulesetEvaluationRun(const Json& request) {
  return CancelRun(true, request);
}

Result<Json> QualityService::CancelDataQualityRuleRecommendationRun(const Json& request) {
  return CancelRun(false, request);
}

Result<Json> QualityService::PutDataQualityRecommendation(const Json& request,
                                                          const Publisher& publisher) {
  auto bad = [](const std::string& message) {
    return Status::InvalidInput(std::string(kRecommendationOperation) + ": " + message);
  };
  if (!request.is_object()) return bad("the request must be a JSON object.");
  for (const auto& [member, value] : request.items())
    if (member != "RunId" && member != "RecommendedRuleset") return bad("unknown member " + member + ".");
  if (!request.contains("RecommendedRuleset") || !request["RecommendedRuleset"].is_string())
    return bad("RecommendedRuleset is required (DQDL text).");
  std::string text = request["RecommendedRuleset"].get<std::string>();
  Result<int64_t> rule_count = CheckRuleset(text);
  if (!rule_count.ok()) return bad(rule_count.status().message());
  std::string id = resource::GetString(request, "RunId");
  if (publisher.is_run) {
    // A run reports its own recommendation only, and only a recommendation run does.
    if (publisher.job != kRecommendationOwner || (!id.empty() && id != publisher.run_id))
      return Status(StatusCode::kAccessDenied,
                    std::string(kRecommendationOperation) + ": run " + publisher.run_id +
                        " reports the recommendation of its own recommendation run only.");
    id = publisher.run_id;
  }
  if (id.empty()) return bad("RunId is required.");
  OG_ASSIGN_OR_RETURN(auto txn, store_->BeginWrite());
  std::string key;
  OG_ASSIGN_OR_RETURN(auto record, LoadRun(txn.get(), kRecommendation, id, &key));
  if (!record) return RunNotFound(kRecommendation, id);
  (*record)["RecommendedRuleset"] = text;
  std::string created = resource::GetString(*record, "CreatedRulesetName");
  if (!created.empty()) {
    OG_ASSIGN_OR_RETURN(auto existing, Load(txn.get(), kRuleset, created, "data quality ruleset " + created));
    // A repeated report of the same run replaces its own ruleset; anybody else's stays.
    if (existing && resource::GetString(*existing, "RecommendationRunId") != id)
      return Status::AlreadyExists("Data quality ruleset with name " + created + " already exists.");
    double now = clock_->NowSeconds();
    Json ruleset{{"Name", created}, {"Ruleset", text}, {"RecommendationRunId", id},
                 {"CreatedOn", existing ? Number(*existing, "CreatedOn", now) : now},
                 {"LastModifiedOn", now}};
    Json table = SourceTable(resource::GetObject(*record, "DataSource"));
    Json target = Json::object();
    for (const char* member : {"TableName", "DatabaseName", "CatalogId"})
      if (table.contains(member)) target[member] = table[member];
    ruleset["TargetTable"] = target;
    if (record->contains("DataQualitySecurityConfiguration"))
      ruleset["DataQualitySecurityConfiguration"] = (*record)["DataQualitySecurityConfiguration"];
    ruleset["_og"] = Json{{"rule_count", *rule_count}};
    OG_RETURN_NOT_OK(txn->Put(kRuleset, created, DumpJson(ruleset)));
  }
  OG_RETURN_NOT_OK(txn->Put(kRecommendationRun, key, DumpJson(*record)));
  OG_RETURN_NOT_OK(txn->Commit());
  OG_LOG(kInfo, "data quality rule recommendation run " << id << " recommended " << *rule_count
                                                        << " rules"
                                                        << (created.empty() ? "" : " as ruleset " + created));
  return Json::object();
}

}  // namespace openglue::quality
