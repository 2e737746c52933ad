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
// Thread-safe: every operation is one store transaction; the only state in memory is the
// borrowed Random, whose calls are serialized here.
#pragma once

#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "common/clock.h"
#include "common/json.h"
#include "common/random.h"
#include "common/status.h"
#include "common/thread_annotations.h"
#include "store/metadata_store.h"

namespace openglue::quality {

struct QualityOptions {
  std::string region = "us-east-1";
  std::string account_id = "000000000000";
};

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
  static Result<std::unique_ptr<QualityService>> Make(store::MetadataStore* store,
                                                      const Clock* clock, Random* random,
                                                      QualityOptions options);

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
  // AccessDenied.
  Result<Json> PublishDataQualityResult(const Json& request, const Publisher& publisher);

 private:
  QualityService(store::MetadataStore* store, const Clock* clock, Random* random,
                 QualityOptions options)
      : store_(store), clock_(clock), options_(std::move(options)), random_(random) {}
  std::string RulesetArn(const std::string& name) const;
  std::string NewResultId() EXCLUDES(random_mutex_);

  store::MetadataStore* store_;
  const Clock* clock_;
  QualityOptions options_;
  Mutex random_mutex_;
  Random* random_ PT_GUARDED_BY(random_mutex_);
};

// The name of the extension operation PublishDataQualityResult serves.
inline constexpr const char* kPublishOperation = "OpenGluePublishDataQualityResult";

}  // namespace openglue::quality
