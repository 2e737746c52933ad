// The quality module's rows in the metadata store, and small helpers shared by its files.
// Internal to src/quality.
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "common/json.h"
#include "common/status.h"
#include "store/metadata_store.h"

namespace openglue::quality::internal {

inline constexpr std::string_view kRuleset = "dq_ruleset";     // name -> ruleset (+ _og)
inline constexpr std::string_view kResult = "dq_result";       // newest first, id -> result (+ _og)
inline constexpr std::string_view kResultId = "dq_result_id";  // result id -> dq_result key
// Ruleset evaluation runs and rule recommendation runs: newest first (ResultKey), and by run id.
inline constexpr std::string_view kEvaluationRun = "dq_eval_run";
inline constexpr std::string_view kEvaluationRunId = "dq_eval_run_id";
inline constexpr std::string_view kRecommendationRun = "dq_rec_run";
inline constexpr std::string_view kRecommendationRunId = "dq_rec_run_id";
inline constexpr std::string_view kRunToken = "dq_run_token";  // (owner, ClientToken) -> run id
// Statistics (statistics.cc): (StatisticId, newest first, ProfileId) -> statistic; profile id ->
// its statistics' keys; (table or job and context, metric name) -> StatisticId.
inline constexpr std::string_view kStatistic = "dq_stat";
inline constexpr std::string_view kProfile = "dq_profile";
inline constexpr std::string_view kStatisticSeries = "dq_stat_series";

// The stored document at (kind, key), or nullopt; Internal naming `what` when it is damaged.
Result<std::optional<Json>> Load(store::Transaction* txn, std::string_view kind,
                                 const std::string& key, const std::string& what);

// A public document: internal bookkeeping ("_og") stripped.
Json Public(Json doc);

// A number member (epoch seconds, a score) or `fallback`.
double Number(const Json& object, const char* member, double fallback);

// Whether `table` (a DataQualityTargetTable or GlueTable) matches the filter `wanted` (the same
// shape): DatabaseName and TableName equal, CatalogId too when `wanted` names one.
bool TableMatches(const Json& table, const Json& wanted);

// Result keys: newest StartedOn first, then the id.
std::string ResultKey(double started_on_seconds, const std::string& id);

}  // namespace openglue::quality::internal
