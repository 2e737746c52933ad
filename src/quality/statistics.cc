// Data-quality statistics, derived from published results (QualityService, quality_service.h):
// each result is a profile (ProfileId), each distinct metric of its rules and analyzers a
// statistic of that profile. A statistic's StatisticId names its series: the same metric of the
// same data (the result's table, else its job and evaluation context) keeps its id from result
// to result, so ListDataQualityStatistics(StatisticId) is that metric's history.
#include <algorithm>
#include <map>
#include <set>

#include "common/logging.h"
#include "common/strings.h"
#include "quality/quality_service.h"
#include "quality/quality_store.h"
#include "resource/paging.h"
#include "resource/request.h"
#include "resource/stored.h"

namespace openglue::quality {

using namespace internal;

namespace {

// What the data of a result is, for its statistics' series.
std::string SeriesOwner(const Json& result) {
  const Json source = resource::GetObject(result, "DataSource");
  for (const char* member : {"GlueTable", "DataQualityGlueTable"}) {
    const Json table = resource::GetObject(source, member);
    if (!table.empty())
      return store::MakeKey({"table", resource::GetString(table, "CatalogId"),
                             resource::GetString(table, "DatabaseName"),
                             resource::GetString(table, "TableName")});
  }
  return store::MakeKey({"job", resource::GetString(result, "JobName"),
                         resource::GetString(result, "EvaluationContext", "default_context")});
}

// A metric name ("Column.amount.Mean", "Dataset.*.RowCount", "Multicolumn.a,b.ColumnCorrelation",
// "Dataset.ref.RowCountMatch") as a StatisticSummary's EvaluationLevel, ColumnsReferenced,
// ReferencedDatasets and StatisticName. The whole name is the StatisticName when it does not
// have that form.
Json DescribeMetric(const std::string& metric) {
  Json out{{"StatisticName", metric}, {"ColumnsReferenced", Json::array()},
           {"ReferencedDatasets", Json::array()}};
  size_t first = metric.find('.');
  std::string level = metric.substr(0, first);
  if (first == std::string::npos || (level != "Dataset" && level != "Column" && level != "Multicolumn"))
    return out;
  size_t second = metric.find('.', first + 1);
  if (second == std::string::npos) return out;
  std::string middle = metric.substr(first + 1, second - first - 1);
  out["EvaluationLevel"] = level;
  out["StatisticName"] = metric.substr(second + 1);
  if (level == "Dataset") {
    if (middle != "*") out["ReferencedDatasets"].push_back(middle);
  } else {
    for (const std::string& column : Split(middle, ','))
      if (!column.empty()) out["ColumnsReferenced"].push_back(column);
  }
  return out;
}

Json Summary(const Json& stored) {
  Json out = Json::object();
  for (const char* member : {"StatisticId", "ProfileId", "RunIdentifier", "StatisticName",
                             "DoubleValue", "EvaluationLevel", "ColumnsReferenced",
                             "ReferencedDatasets", "StatisticProperties", "RecordedOn",
                             "InclusionAnnotation"})
    if (stored.contains(member)) out[member] = stored[member];
  return out;
}

// Whether a stored statistic passes the request's StatisticId, ProfileId and TimestampFilter.
bool Wanted(const Json& stat, const Json& request) {
  for (const char* member : {"StatisticId", "ProfileId"}) {
    std::string want = resource::GetString(request, member);
    if (!want.empty() && resource::GetString(stat, member) != want) return false;
  }
  const Json filter = resource::GetObject(request, "TimestampFilter");
  double recorded = Number(stat, "RecordedOn", 0);
  if (filter.contains("RecordedBefore") && !(recorded < Number(filter, "RecordedBefore", 0))) return false;
  if (filter.contains("RecordedAfter") && !(recorded > Number(filter, "RecordedAfter", 0))) return false;
  return true;
}

}  // namespace

Status QualityService::RecordStatistics(store::Transaction* txn, Json* result) {
  std::string profile = NewId("dqprofile-");
  (*result)["ProfileId"] = profile;
  std::map<std::string, double> metrics;  // the first value of each metric name
  auto collect = [&](const Json& items) {
    if (!items.is_array()) return;
    for (const Json& item : items) {
      const Json evaluated = resource::GetObject(item, "EvaluatedMetrics");
      for (const auto& [name, value] : evaluated.items())
        if (value.is_number()) metrics.emplace(name, value.get<double>());
    }
  };
  collect(result->contains("RuleResults") ? (*result)["RuleResults"] : Json::array());
  collect(result->contains("AnalyzerResults") ? (*result)["AnalyzerResults"] : Json::array());
  Json run = Json::object();
  if (result->contains("RulesetEvaluationRunId")) run["RunId"] = (*result)["RulesetEvaluationRunId"];
  if (result->contains("JobRunId")) run["JobRunId"] = (*result)["JobRunId"];
  double recorded = Number(*result, "StartedOn", clock_->NowSeconds());
  std::string owner = SeriesOwner(*result);
  Json keys = Json::array();
  for (const auto& [name, value] : metrics) {
    std::string series = store::MakeKey({owner, name});
    OG_ASSIGN_OR_RETURN(auto known, txn->Get(kStatisticSeries, series));
    std::string id = known ? *known : NewId("dqstat-");
    if (!known) OG_RETURN_NOT_OK(txn->Insert(kStatisticSeries, series, id));
    Json stat = DescribeMetric(name);
    stat["StatisticId"] = id;
    stat["ProfileId"] = profile;
    stat["DoubleValue"] = value;
    stat["RecordedOn"] = recorded;
    if (!run.empty()) stat["RunIdentifier"] = run;
    stat["StatisticProperties"] = Json{{"MetricName", name}};
    // A series is kept newest first.
    std::string key = store::MakeKey({id, ResultKey(recorded, profile)});
    OG_RETURN_NOT_OK(txn->Insert(kStatistic, key, DumpJson(stat)));
    keys.push_back(key);
  }
  return txn->Insert(kProfile, profile, DumpJson(keys));
}

namespace {

// The statistics of `profile` as (key, stored document); EntityNotFound for an unknown profile.
Result<std::vector<std::pair<std::string, Json>>> ProfileStatistics(store::Transaction* txn,
                                                                    const std::string& profile) {
  OG_ASSIGN_OR_RETURN(auto keys_text, txn->Get(kProfile, profile));
  if (!keys_text) return Status::EntityNotFound("Data quality profile " + profile + " not found.");
  Json keys = ParseJson(*keys_text);
  std::vector<std::pair<std::string, Json>> out;
  if (!keys.is_array()) return out;
  for (const Json& key : keys) {
    if (!key.is_string()) continue;
    OG_ASSIGN_OR_RETURN(auto stat, Load(txn, kStatistic, key.get<std::string>(), "data quality statistic"));
    if (stat) out.emplace_back(key.get<std::string>(), std::move(*stat));
  }
  return out;
}

}  // namespace

Result<Json> QualityService::ListDataQualityStatistics(const Json& request) {
  std::string statistic = resource::GetString(request, "StatisticId");
  OG_ASSIGN_OR_RETURN(auto txn, store_->BeginRead());
  auto keep = [&](const store::Row& row) -> Result<bool> {
    OG_ASSIGN_OR_RETURN(Json stat, resource::ParseStored(row.doc, "data quality statistic"));
    return Wanted(stat, request);
  };
  OG_ASSIGN_OR_RETURN(resource::Page page,
                      resource::ScanPage(txn.get(), kStatistic,
                                         statistic.empty() ? "" : store::PrefixOf({statistic}), request,
                                         resource::PageSize(request, 100), keep));
  Json stats = Json::array();
  for (const auto& row : page.rows) {
    OG_ASSIGN_OR_RETURN(Json stat, resource::ParseStored(row.doc, "data quality statistic"));
    stats.push_back(Summary(stat));
  }
  Json response{{"Statistics", std::move(stats)}};
  if (!page.next_token.empty()) response["NextToken"] = page.next_token;
  return response;
}

Result<Json> QualityService::ListDataQualityStatisticAnnotations(const Json& request) {
  std::string statistic = resource::GetString(request, "StatisticId");
  OG_ASSIGN_OR_RETURN(auto txn, store_->BeginRead());
  auto keep = [&](const store::Row& row) -> Result<bool> {
    OG_ASSIGN_OR_RETURN(Json stat, resource::ParseStored(row.doc, "data quality statistic"));
    return stat.contains("InclusionAnnotation") && Wanted(stat, request);
  };
  OG_ASSIGN_OR_RETURN(resource::Page page,
                      resource::ScanPage(txn.get(), kStatistic,
                                         statistic.empty() ? "" : store::PrefixOf({statistic}), request,
                                         resource::PageSize(request, 100), keep));
  Json annotations = Json::array();
  for (const auto& row : page.rows) {
    OG_ASSIGN_OR_RETURN(Json stat, resource::ParseStored(row.doc, "data quality statistic"));
    annotations.push_back({{"ProfileId", stat["ProfileId"]}, {"StatisticId", stat["StatisticId"]},
                           {"StatisticRecordedOn", stat["RecordedOn"]},
                           {"InclusionAnnotation", stat["InclusionAnnotation"]}});
  }
  Json response{{"Annotations", std::move(annotations)}};
  if (!page.next_token.empty()) response["NextToken"] = page.next_token;
  return response;
}

Result<Json> QualityService::BatchPutDataQualityStatisticAnnotation(const Json& request) {
  const Json items = request.contains("InclusionAnnotations") && request["InclusionAnnotations"].is_array()
                         ? request["InclusionAnnotations"] : Json::array();
  OG_ASSIGN_OR_RETURN(auto txn, store_->BeginWrite());
  Json failed = Json::array();
  double now = clock_->NowSeconds();
  for (const Json& item : items) {
    std::string profile = resource::GetString(item, "ProfileId");
    std::string statistic = resource::GetString(item, "StatisticId");
    std::string value = resource::GetString(item, "InclusionAnnotation");
    auto fail = [&](const std::string& reason) {
      failed.push_back({{"ProfileId", profile}, {"StatisticId", statistic}, {"FailureReason", reason}});
    };
    if (profile.empty() || statistic.empty() || value.empty()) {
      fail("ProfileId, StatisticId and InclusionAnnotation are required.");
      continue;
    }
    Result<std::vector<std::pair<std::string, Json>>> stats = ProfileStatistics(txn.get(), profile);
    if (!stats.ok()) {
      if (stats.status().code() != StatusCode::kEntityNotFound) return stats.status();
      fail(stats.status().message());
      continue;
    }
    bool found = false;
    for (auto& [key, stat] : *stats) {
      if (resource::GetString(stat, "StatisticId") != statistic) continue;
      found = true;
      stat["InclusionAnnotation"] = {{"Value", value}, {"LastModifiedOn", now}};
      OG_RETURN_NOT_OK(txn->Put(kStatistic, key, DumpJson(stat)));
    }
    if (!found) fail("Statistic " + statistic + " not found in profile " + profile + ".");
  }
  OG_RETURN_NOT_OK(txn->Commit());
  return Json{{"FailedInclusionAnnotations", std::move(failed)}};
}

Result<Json> QualityService::PutDataQualityProfileAnnotation(const Json& request) {
  std::string profile = resource::GetString(request, "ProfileId");
  std::string value = resource::GetString(request, "InclusionAnnotation");
  OG_ASSIGN_OR_RETURN(auto txn, store_->BeginWrite());
  OG_ASSIGN_OR_RETURN(auto stats, ProfileStatistics(txn.get(), profile));
  double now = clock_->NowSeconds();
  for (auto& [key, stat] : stats) {
    stat["InclusionAnnotation"] = {{"Value", value}, {"LastModifiedOn", now}};
    OG_RETURN_NOT_OK(txn->Put(kStatistic, key, DumpJson(stat)));
  }
  OG_RETURN_NOT_OK(txn->Commit());
  return Json::object();
}

}  // namespace openglue::quality
