// QualityService: the server side of Glue Data Quality, kept in the MetadataStore.
//
// Operations (Glue request -> response documents; Glue's own are validated against the service
// model by the api module before they arrive):
//   CreateDataQualityRuleset, GetDataQualityRuleset, UpdateDataQualityRuleset,
//   DeleteDataQualityRuleset, ListDataQualityRulesets     rulesets: a name, DQDL text, an
//                                                          optional target table, tags
//   GetDataQualityResult, ListDataQualityResults, BatchGetDataQualityResult
//                                                          results, as they were published
//   PublishDataQualityResult                               the OpenGlue extension operation
//                                                          OpenGluePublishDataQualityResult,
//                                                          validated here (see below)
//   Start/Get/List/Cancel DataQualityRulesetEvaluationRun(s), Start/Get/List/Cancel
//   DataQualityRuleRecommendationRun(s)                    runs: processes of the job service
//                                                          (runs.cc, see "Runs" below)
//   PutDataQualityRecommendation                           the extension operation
//                                                          OpenGluePutDataQualityRecommendation
//
// Rulesets. The DQDL text gets only a structural check here (quality/ruleset_text.h:
// InvalidInput when it has no closed `Rules = [ ... ]` list); its rule count is kept for
// ListDataQualityRulesets. TargetTable, DataQualitySecurityConfiguration and RulesetName are
// stored as given, not checked against the catalog. A Create with the ClientToken of the
// existing ruleset of that name succeeds again (a retried request); otherwise a second Create is
// AlreadyExists. Tags live in the shared tag store under
// arn:aws:glue:<region>:<account>:dataQualityRuleset/<name> (RulesetExists resolves them).
//
// Results. A job run's data-quality evaluation (awsgluedq in the runtime) publishes what it
// found; the server gives it an id ("dqresult-" and 40 lowercase hex characters), keeps it and
// serves it back unchanged. Results are listed newest first (by StartedOn). Nothing deletes them
// (Glue has no DeleteDataQualityResult).
//
// Runs. A run is a record here (what was asked, the results it published, its recommendation)
// and a module run of jobs::JobService under the same id, which owns its process, state,
// timeout, stop and recovery; Get and List merge the module run's state into the record.
//
// Thread-safe: every operation is one store transaction (Start: two, and the job service's); the only state in memory is the
// borrowed Random, whose calls are serialized here.
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "common/clock.h"
#include "common/json.h"
#include "common/random.h"
#include "common/status.h"
#include "common/thread_annotations.h"
#include "jobs/job_service.h"
#include "store/metadata_store.h"

namespace openglue::quality {

struct QualityOptions {
  std::string region = "us-east-1";
  std::string account_id = "000000000000";
  // OK when the GlueTable `table` ({DatabaseName, TableName, CatalogId?}) exists, else
  // EntityNotFound (main asks the catalog). Unset: tables are not checked.
  std::function<Status(const Json& table)> table_exists;
};

// The job names under which the job service keeps the module runs of evaluation and
// recommendation runs (jobs::ModuleRun::owner; no stored job has them), and the runtime module
// they run.
inline constexpr const char* kEvaluationOwner = "openglue:data-quality-evaluation";
inline constexpr const char* kRecommendationOwner = "openglue:data-quality-recommendation";
inline constexpr const char* kRunModule = "openglue_runtime.quality.run";
inline constexpr int64_t kDefaultRunTimeoutMinutes = 2880;

// Who publishes a result (decided by the api module from the request's principal).
struct Publisher {
  // A job run's own credential: the result is that run's. Otherwise (an administrator, or a
  // server without auth) the request's JobName and JobRunId are recorded as given.
  bool is_run = false;
  std::string job;     // is_run: the run's job
  std::string run_id;  // is_run: the run's id
};

// For resource::TagService::Register("dataQualityRuleset", ...): OK when `resource`
// ({"dataQualityRuleset", <name>}; a name with '/' arrives split, and is joined again) names a
// ruleset, else EntityNotFound.
Status RulesetExists(store::Transaction* txn, const std::vector<std::string>& resource);

class QualityService {
 public:
  // Borrowed: store, clock and random must outlive the service. The service serializes its own
  // calls to `random`.
  // `jobs` (borrowed, may be null: then the Start operations are Internal errors) runs the
  // evaluation and recommendation runs.
  static Result<std::unique_ptr<QualityService>> Make(store::MetadataStore* store,
                                                      const Clock* clock, Random* random,
                                                      QualityOptions options,
                                                      jobs::JobService* jobs = nullptr);

  using Operation = Result<Json> (QualityService::*)(const Json& request);
  // Glue's operations this service implements (not the extension), with their handlers.
  static const std::vector<std::pair<std::string, Operation>>& Operations();

  // {Name, Ruleset, Description?, TargetTable?, Tags?, DataQualitySecurityConfiguration?,
  //  ClientToken?} -> {Name}. InvalidInput for a ruleset that fails CheckRuleset, AlreadyExists.
  Result<Json> CreateDataQualityRuleset(const Json& request);
  // {Name} -> the ruleset (Name, Description, Ruleset, TargetTable, CreatedOn, LastModifiedOn,
  // DataQualitySecurityConfiguration; absent members left out). EntityNotFound.
  Result<Json> GetDataQualityRuleset(const Json& request);
  // {Name, Description?, Ruleset?} -> {Name, Description, Ruleset}; LastModifiedOn becomes now.
  // EntityNotFound, InvalidInput.
  Result<Json> UpdateDataQualityRuleset(const Json& request);
  // {Name} -> {}; its tags go with it. EntityNotFound.
  Result<Json> DeleteDataQualityRuleset(const Json& request);
  // {Filter?, Tags?, MaxResults?, NextToken?} -> {Rulesets: [DataQualityRulesetListDetails],
  // NextToken?}, in name order. Filter: Name and Description equal; Created/LastModified
  // Before/After strictly; TargetTable's DatabaseName and TableName equal (CatalogId when given).
  // Tags: every one carried.
  Result<Json> ListDataQualityRulesets(const Json& request);

  // {ResultId} -> the result. EntityNotFound.
  Result<Json> GetDataQualityResult(const Json& request);
  // {Filter?, MaxResults?, NextToken?} -> {Results: [DataQualityResultDescription], NextToken?},
  // newest StartedOn first. Filter: JobName, JobRunId equal; StartedAfter / StartedBefore
  // strictly; DataSource.GlueTable's DatabaseName and TableName equal (CatalogId when given).
  Result<Json> ListDataQualityResults(const Json& request);
  // {ResultIds} -> {Results, ResultsNotFound}: the found ones in the order asked (each id once),
  // the unknown ids in ResultsNotFound (empty when all were found).
  Result<Json> BatchGetDataQualityResult(const Json& request);

  // Runs (docs/data-quality.md, "Evaluation and recommendation runs"). Each run is a module
  // run of `jobs` (owner kEvaluationOwner / kRecommendationOwner, id "dqrun-" and 40 hex
  // digits) running kRunModule; Status, times and ErrorString are its job run's.
  //
  // {DataSource, Role, RulesetNames, NumberOfWorkers?, Timeout?, ClientToken?,
  //  AdditionalRunOptions?, AdditionalDataSources?} -> {RunId}. EntityNotFound for an unknown
  // table (QualityOptions::table_exists) or ruleset, before anything is started; InvalidInput
  // for a DataSource without a GlueTable, a ruleset named twice, a Timeout below 1. A repeated
  // ClientToken answers the run it started.
  Result<Json> StartDataQualityRulesetEvaluationRun(const Json& request);
  // {RunId} -> the run (RunId, DataSource, Role, NumberOfWorkers, Timeout, AdditionalRunOptions,
  // Status, ErrorString, StartedOn, LastModifiedOn, CompletedOn, ExecutionTime, RulesetNames,
  // ResultIds, AdditionalDataSources). EntityNotFound.
  Result<Json> GetDataQualityRulesetEvaluationRun(const Json& request);
  // {Filter? {DataSource, StartedBefore?, StartedAfter?}, NextToken?, MaxResults?} ->
  // {Runs: [{RunId, Status, StartedOn, DataSource}], NextToken?}, newest first.
  Result<Json> ListDataQualityRulesetEvaluationRuns(const Json& request);
  // {RunId} -> {}: the run goes STOPPING, then STOPPED. EntityNotFound; InvalidInput for a run
  // that has finished.
  Result<Json> CancelDataQualityRulesetEvaluationRun(const Json& request);
  // {DataSource, Role, NumberOfWorkers?, Timeout?, CreatedRulesetName?,
  //  DataQualitySecurityConfiguration?, ClientToken?} -> {RunId}. EntityNotFound for an unknown
  // table; AlreadyExists for a CreatedRulesetName in use.
  Result<Json> StartDataQualityRuleRecommendationRun(const Json& request);
  // {RunId} -> the run (..., RecommendedRuleset once reported, CreatedRulesetName,
  // DataQualitySecurityConfiguration). EntityNotFound.
  Result<Json> GetDataQualityRuleRecommendationRun(const Json& request);
  Result<Json> ListDataQualityRuleRecommendationRuns(const Json& request);
  Result<Json> CancelDataQualityRuleRecommendationRun(const Json& request);

  // OpenGluePutDataQualityRecommendation: {RunId?, RecommendedRuleset} -> {}. A recommendation
  // run reports its ruleset (RunId absent or its own; other runs are AccessDenied; other
  // callers must name RunId). The text must pass CheckRuleset (InvalidInput). With the run's
  // CreatedRulesetName, the ruleset is stored under that name with TargetTable = the run's table
  // and RecommendationRunId = the run (AlreadyExists when another ruleset took the name).
  // EntityNotFound for an unknown run.
  Result<Json> PutDataQualityRecommendation(const Json& request, const Publisher& publisher);

  // Statistics (statistics.cc): every published result is a profile (its ProfileId), every
  // distinct metric of its rules and analyzers a statistic (StatisticName, EvaluationLevel,
  // ColumnsReferenced, ReferencedDatasets from the metric's name; DoubleValue; RecordedOn = the
  // result's StartedOn; RunIdentifier = its RulesetEvaluationRunId / JobRunId). A StatisticId
  // names a series: the same metric of the same table (else job and evaluation context).
  //
  // {StatisticId?, ProfileId?, TimestampFilter?, MaxResults?, NextToken?} -> {Statistics,
  // NextToken?}; a series newest first.
  Result<Json> ListDataQualityStatistics(const Json& request);
  // The same filters -> {Annotations: [{ProfileId, StatisticId, StatisticRecordedOn,
  // InclusionAnnotation}]}, the annotated statistics only.
  Result<Json> ListDataQualityStatisticAnnotations(const Json& request);
  // {InclusionAnnotations: [{ProfileId, StatisticId, InclusionAnnotation}]} ->
  // {FailedInclusionAnnotations}: each item applies on its own; an unknown profile or statistic
  // is a failed item.
  Result<Json> BatchPutDataQualityStatisticAnnotation(const Json& request);
  // {ProfileId, InclusionAnnotation} -> {}: every statistic of the profile. EntityNotFound.
  Result<Json> PutDataQualityProfileAnnotation(const Json& request);

  // OpenGluePublishDataQualityResult:
  //   {Score (number 0..1), StartedOn, CompletedOn (epoch seconds, CompletedOn >= StartedOn),
  //    RuleResults ([{Name?, Description?, EvaluationMessage?, Result: PASS|FAIL|ERROR,
  //                   EvaluatedMetrics?: {name: number}, EvaluatedRule?, RuleMetrics?, Labels?}]),
  //    JobName?, JobRunId?, EvaluationContext?, RulesetName?, Ruleset? (DQDL text, kept but not
  //    served), DataSource? ({"GlueTable": {DatabaseName, TableName, ...}}), AnalyzerResults?,
  //    Observations?, AggregatedMetrics?} -> {ResultId}.
  // InvalidInput naming the first bad member (a member of the wrong type, a missing required
  // one, an unknown one, a Score out of range, an unknown Result). For a run publisher the
  // JobName and JobRunId recorded are the run's: absent ones are filled in, different ones are
  // AccessDenied; an evaluation run's result gets RulesetEvaluationRunId (its own; JobName and
  // JobRunId are then refused) and is added to the run's ResultIds. A RulesetEvaluationRunId
  // given by another caller must name an evaluation run (EntityNotFound).
  Result<Json> PublishDataQualityResult(const Json& request, const Publisher& publisher);

 private:
  QualityService(store::MetadataStore* store, const Clock* clock, Random* random,
                 QualityOptions options, jobs::JobService* jobs)
      : store_(store), clock_(clock), options_(std::move(options)), jobs_(jobs), random_(random) {}
  std::string RulesetArn(const std::string& name) const;
  std::string NewResultId() EXCLUDES(random_mutex_);
  std::string NewRunId() EXCLUDES(random_mutex_);
  std::string NewId(const std::string& prefix) EXCLUDES(random_mutex_);  // prefix + 40 hex
  // Gives `result` its ProfileId and stores its statistics in `txn`.
  Status RecordStatistics(store::Transaction* txn, Json* result);
  Status CheckSource(const Json& source, const char* member) const;
  // Writes `record` (completed with the request's common members), starts its module run with
  // `spec`; returns the run id.
  Result<std::string> StartRun(bool evaluation, const Json& request, Json record, Json spec);
  Result<Json> GetRun(bool evaluation, const Json& request);
  Result<Json> ListRuns(bool evaluation, const Json& request);
  Result<Json> CancelRun(bool evaluation, const Json& request);

  store::MetadataStore* store_;
  const Clock* clock_;
  QualityOptions options_;
  jobs::JobService* jobs_;
  Mutex random_mutex_;
  Random* random_ PT_GUARDED_BY(random_mutex_);
};

// The name of the extension operation PublishDataQualityResult serves.
inline constexpr const char* kPublishOperation = "OpenGluePublishDataQualityResult";
// The name of the extension operation PutDataQualityRecommendation serves.
inline constexpr const char* kRecommendationOperation = "OpenGluePutDataQualityRecommendation";

}  // namespace openglue::quality
