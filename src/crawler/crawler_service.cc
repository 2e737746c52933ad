#include "crawler/crawler_service.h"

#include <algorithm>
#include <cstdio>
#include <exception>
#include <set>

#include "common/cron.h"
#include "common/logging.h"
#include "common/strings.h"
#include "crawler/crawl.h"
#include "crawler/grok.h"
#include "resource/paging.h"
#include "resource/request.h"
#include "resource/stored.h"
#include "resource/tags.h"
#include "storage/local_object_store.h"

namespace openglue::crawler {

namespace {

constexpr const char* kCrawler = "crawler";
constexpr const char* kCrawl = "crawler_crawl";
constexpr const char* kClassifier = "classifier";
constexpr const char* kLogGroup = "/aws-glue/crawlers";
// Crawl records kept per crawler (older ones are dropped when a crawl ends).
constexpr size_t kCrawlHistory = 100;

using resource::GetObject;
using resource::GetString;
using resource::ParseStored;

Status NotFound(const std::string& name) {
  return Status::EntityNotFound("Crawler entry with name " + name + " does not exist");
}

std::string CrawlKey(const std::string& crawler, int64_t start_ms, const std::string& id) {
  char padded[32];
  std::snprintf(padded, sizeof padded, "%020lld", static_cast<long long>(start_ms));
  return store::MakeKey({crawler, padded, id});
}

// Checks and normalizes the crawler members of a Create/Update request into `crawler`.
Status ApplyCrawlerInput(const Json& request, bool create, Json* crawler) {
  for (const char* member : {"Role", "DatabaseName", "Description", "TablePrefix", "Targets",
                             "Classifiers", "SchemaChangePolicy", "RecrawlPolicy",
                             "LineageConfiguration", "LakeFormationConfiguration", "Configuration",
                             "CrawlerSecurityConfiguration"}) {
    if (request.contains(member) && !request[member].is_null()) (*crawler)[member] = request[member];
  }
  if (create || request.contains("SchemaChangePolicy")) {
    Json policy = crawler->value("SchemaChangePolicy", Json::object());
    if (!policy.contains("UpdateBehavior")) policy["UpdateBehavior"] = "UPDATE_IN_DATABASE";
    if (!policy.contains("DeleteBehavior")) policy["DeleteBehavior"] = "DEPRECATE_IN_DATABASE";
    (*crawler)["SchemaChangePolicy"] = policy;
  }
  if (!crawler->contains("RecrawlPolicy")) (*crawler)["RecrawlPolicy"] = {{"RecrawlBehavior", "CRAWL_EVERYTHING"}};
  if (!crawler->contains("LineageConfiguration"))
    (*crawler)["LineageConfiguration"] = {{"CrawlerLineageSettings", "DISABLE"}};
  if (request.contains("Schedule")) {
    std::string expression = GetString(request, "Schedule");
    if (expression.empty()) {
      crawler->erase("Schedule");
    } else {
      OG_RETURN_NOT_OK(CronSchedule::Parse(expression).status());
      (*crawler)["Schedule"] = {{"ScheduleExpression", expression}, {"State", "SCHEDULED"}};
    }
  }
  // Targets: S3 paths must be s3:// locations. Empty target lists are accepted, as Glue's model
  // allows (a crawler may get its targets by UpdateCrawler); a crawl without any fails.
  const Json targets = crawler->value("Targets", Json::object());
  for (const Json& target : targets.value("S3Targets", Json::array())) {
    std::string path = target.value("Path", "");
    if (!StartsWith(path, "s3://") && !StartsWith(path, "s3a://") && !StartsWith(path, "s3n://"))
      return Status::InvalidInput("S3 target path must start with s3://: '" + path + "'");
    if (target.contains("SampleSize") && target["SampleSize"].is_number_integer()) {
      int64_t n = target["SampleSize"].get<int64_t>();
      if (n < 1 || n > 249) return Status::InvalidInput("SampleSize must be between 1 and 249");
    }
  }
  Json recrawl = crawler->value("RecrawlPolicy", Json::object());
  Json policy = crawler->value("SchemaChangePolicy", Json::object());
  if (recrawl.value("RecrawlBehavior", "") == "CRAWL_NEW_FOLDERS_ONLY" &&
      (policy.value("UpdateBehavior", "") != "LOG" || policy.value("DeleteBehavior", "") != "LOG"))
    return Status::InvalidInput(
        "The SchemaChangePolicy for \"Crawl new folders only\" crawlers must have "
        "UpdateBehavior LOG and DeleteBehavior LOG");
  if (crawler->contains("Configuration")) {
    OG_RETURN_NOT_OK(ParseCrawlerConfiguration(crawler->value("Configuration", "")).status());
  }
  return Status::OK();
}

// An ISO 8601 date-time ("2024-06-01T07:30:00", optional fraction, "Z" or "+hh:mm"; a space
// may stand for the "T"; no offset is UTC) as epoch seconds; false when `text` is not one.
bool ParseIsoTime(const std::string& text, double* epoch_seconds) {
  int y, mo, d, h, mi, consumed = 0;
  double sec;
  if (std::sscanf(text.c_str(), "%4d-%2d-%2d%*1[T ]%2d:%2d:%lf%n", &y, &mo, &d, &h, &mi, &sec,
                  &consumed) != 6 || mo < 1 || mo > 12 || d < 1 || d > 31 || h > 23 || mi > 59 ||
      sec < 0 || sec >= 61) {
    return false;
  }
  std::string zone = text.substr(static_cast<size_t>(consumed));
  int offset_minutes = 0;
  if (!zone.empty() && zone != "Z") {
    int oh, om, used = 0;
    char sign;
    if (std::sscanf(zone.c_str(), "%c%2d:%2d%n", &sign, &oh, &om, &used) != 3 ||
        (sign != '+' && sign != '-') || used != static_cast<int>(zone.size()) || oh > 23 || om > 59)
      return false;
    offset_minutes = (sign == '+' ? 1 : -1) * (oh * 60 + om);
  }
  // Days since the epoch of a proleptic Gregorian date (Howard Hinnant's days_from_civil).
  const int yy = y - (mo <= 2);
  const int era = (yy >= 0 ? yy : yy - 399) / 400;
  const int yoe = yy - era * 400;
  const int doy = (153 * (mo + (mo > 2 ? -3 : 9)) + 2) / 5 + d - 1;
  const int doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
  const double days = era * 146097.0 + doe - 719468;
  *epoch_seconds = days * 86400 + h * 3600 + mi * 60 + sec - offset_minutes * 60;
  return true;
}

// Every value in the filters' terms: STATE, CRAWL_ID as strings; DPU_HOUR as a number; times as
// epoch seconds or milliseconds or an ISO 8601 date-time.
Result<bool> MatchesFilters(const Json& crawl, const Json& filters) {
  for (const Json& filter : filters) {
    std::string field = filter.value("FieldName", "");
    std::string op = filter.value("FilterOperator", "EQ");
    std::string value = filter.value("FieldValue", "");
    int cmp = 0;
    if (field == "STATE" || field == "CRAWL_ID") {
      std::string actual = crawl.value(field == "STATE" ? "State" : "CrawlId", "");
      cmp = actual < value ? -1 : actual > value ? 1 : 0;
    } else {
      const char* member = field == "START_TIME" ? "StartTime" : field == "END_TIME" ? "EndTime" : "DPUHour";
      if (!crawl.contains(member) || !crawl[member].is_number()) return false;
      double actual = crawl[member].get<double>();
      char* end = nullptr;
      double wanted = std::strtod(value.c_str(), &end);
      const bool number = !value.empty() && end == value.c_str() + value.size();
      if (!number && (field == "DPU_HOUR" || !ParseIsoTime(value, &wanted)))
        return Status::InvalidInput("Filter value for " + field + " must be a number" +
                                    (field == "DPU_HOUR" ? "" : " or an ISO 8601 date-time") +
                                    ": '" + value + "'");
      // Times: epoch seconds or milliseconds.
      if (number && field != "DPU_HOUR" && wanted > 1e11) wanted /= 1000.0;
      cmp = actual < wanted ? -1 : actual > wanted ? 1 : 0;
    }
    bool ok = (op == "EQ" && cmp == 0) || (op == "NE" && cmp != 0) || (op == "GT" && cmp > 0) ||
              (op == "GE" && cmp >= 0) || (op == "LT" && cmp < 0) || (op == "LE" && cmp <= 0);
    if (!ok) return false;
  }
  return true;
}

const char* ClassifierKinds[] = {"GrokClassifier", "XMLClassifier", "JsonClassifier", "CsvClassifier"};

// The one classifier of a Create/UpdateClassifier request: its kind and members.
Result<std::pair<std::string, Json>> RequestClassifier(const Json& request) {
  std::string kind;
  Json body;
  for (const char* k : ClassifierKinds) {
    if (request.contains(k) && request[k].is_object()) {
      if (!kind.empty()) return Status::InvalidInput("Only one classifier can be specified per request");
      kind = k;
      body = request[k];
    }
  }
  if (kind.empty()) return Status::InvalidInput("A classifier (GrokClassifier, XMLClassifier, JsonClassifier or CsvClassifier) is required");
  if (kind == "CsvClassifier") {
    std::string delimiter = body.value("Delimiter", ""), quote = body.value("QuoteSymbol", "");
    if (!delimiter.empty() && delimiter == quote)
      return Status::InvalidInput("Delimiter and QuoteSymbol of a CSV classifier must differ");
  }
  if (kind == "GrokClassifier" && body.contains("GrokPattern")) {
    OG_RETURN_NOT_OK(GrokPattern::Make(body.value("GrokPattern", ""), body.value("CustomPatterns", "")).status());
  }
  if (kind == "JsonClassifier") {
    std::string path = body.value("JsonPath", "");
    if (!StartsWith(path, "$")) return Status::InvalidInput("JsonPath must start with $: '" + path + "'");
  }
  return std::make_pair(kind, body);
}

}  // namespace

Status CrawlerExists(store::Transaction* txn, const std::vector<std::string>& resource) {
  if (resource.size() != 2 || resource[0] != "crawler") return Status::EntityNotFound("not a crawler");
  OG_ASSIGN_OR_RETURN(auto doc, txn->Get(kCrawler, resource[1]));
  if (!doc) return NotFound(resource[1]);
  return Status::OK();
}

CrawlerService::CrawlerService(store::MetadataStore* store, catalog::Catalog* catalog,
                               const Clock* clock, Random* random, CrawlerServiceOptions options)
    : store_(store), catalog_(catalog), clock_(clock), random_(random), options_(std::move(options)) {}

CrawlerService::~CrawlerService() { Stop(); }

Result<std::unique_ptr<CrawlerService>> CrawlerService::Make(store::MetadataStore* store,
                                                             catalog::Catalog* catalog,
                                                             const Clock* clock, Random* random,
                                                             CrawlerServiceOptions options) {
  if (!store || !catalog || !clock || !random) return Status::Internal("CrawlerService needs its parts");
  if (options.classify_threads < 1) options.classify_threads = 1;
  std::unique_ptr<CrawlerService> service(new CrawlerService(store, catalog, clock, random, std::move(options)));
  service->objects_ = service->options_.objects;
  if (!service->objects_) {
    OG_ASSIGN_OR_RETURN(service->own_objects_,
                        storage::LocalObjectStore::Make({service->options_.data_dir + "/s3"}));
    service->objects_ = service->own_objects_.get();
  }
  return service;
}

const std::vector<std::pair<std::string, CrawlerService::Operation>>& CrawlerService::Operations() {
  static const std::vector<std::pair<std::string, Operation>> kOps = {
      {"CreateCrawler", &CrawlerService::CreateCrawler},
      {"GetCrawler", &CrawlerService::GetCrawler},
      {"GetCrawlers", &CrawlerService::GetCrawlers},
      {"ListCrawlers", &CrawlerService::ListCrawlers},
      {"BatchGetCrawlers", &CrawlerService::BatchGetCrawlers},
      {"UpdateCrawler", &CrawlerService::UpdateCrawler},
      {"DeleteCrawler", &CrawlerService::DeleteCrawler},
      {"StartCrawler", &CrawlerService::StartCrawler},
      {"StopCrawler", &CrawlerService::StopCrawler},
      {"StartCrawlerSchedule", &CrawlerService::StartCrawlerSchedule},
      {"StopCrawlerSchedule", &CrawlerService::StopCrawlerSchedule},
      {"UpdateCrawlerSchedule", &CrawlerService::UpdateCrawlerSchedule},
      {"GetCrawlerMetrics", &CrawlerService::GetCrawlerMetrics},
      {"ListCrawls", &CrawlerService::ListCrawls},
      {"CreateClassifier", &CrawlerService::CreateClassifier},
      {"GetClassifier", &CrawlerService::GetClassifier},
      {"GetClassifiers", &CrawlerService::GetClassifiers},
      {"UpdateClassifier", &CrawlerService::UpdateClassifier},
      {"DeleteClassifier", &CrawlerService::DeleteClassifier},
  };
  return kOps;
}

std::string CrawlerService::CrawlerArn(const std::string& name) const {
  return "arn:aws:glue:" + options_.region + ":" + options_.account_id + ":crawler/" + name;
}

std::string CrawlerService::NewCrawlId() {
  MutexLock lock(&random_mu_);
  std::string hex = random_->Hex(16);
  return hex.substr(0, 8) + "-" + hex.substr(8, 4) + "-" + hex.substr(12, 4) + "-" + hex.substr(16, 4) +
         "-" + hex.substr(20, 12);
}

Result<Json> CrawlerService::LoadCrawler(store::Transaction* txn, const std::string& name) {
  OG_ASSIGN_OR_RETURN(auto doc, txn->Get(kCrawler, name));
  if (!doc) return NotFound(name);
  return ParseStored(*doc, "crawler " + name);
}

Json CrawlerService::ToWire(Json crawler) const {
  if (crawler.value("State", "READY") != "READY" && crawler.contains("_crawl_start_ms"))
    crawler["CrawlElapsedTime"] = std::max<int64_t>(0, clock_->NowMillis() - crawler["_crawl_start_ms"].get<int64_t>());
  else
    crawler["CrawlElapsedTime"] = 0;
  for (auto it = crawler.begin(); it != crawler.end();) {
    if (StartsWith(it.key(), "_")) it = crawler.erase(it);
    else ++it;
  }
  return crawler;
}

// ---- crawler definitions ----------------------------------------------------------------------

Result<Json> CrawlerService::CreateCrawler(const Json& request) {
  std::string name = GetString(request, "Name");
  double now = clock_->NowSeconds();
  Json crawler = {{"Name", name}, {"State", "READY"}, {"Version", 1}, {"CreationTime", now},
                  {"LastUpdated", now}};
  OG_RETURN_NOT_OK(ApplyCrawlerInput(request, true, &crawler));
  OG_ASSIGN_OR_RETURN(auto txn, store_->BeginWrite());
  Status st = txn->Insert(kCrawler, name, DumpJson(crawler));
  if (st.code() == StatusCode::kAlreadyExists)
    return Status::AlreadyExists("Crawler with name " + name + " has already been created");
  OG_RETURN_NOT_OK(st);
  if (request.contains("Tags") && request["Tags"].is_object() && !request["Tags"].empty())
    OG_RETURN_NOT_OK(resource::AddTags(txn.get(), CrawlerArn(name), request["Tags"]));
  OG_RETURN_NOT_OK(txn->Commit());
  SchedulesChanged();
  return Json::object();
}

Result<Json> CrawlerService::GetCrawler(const Json& request) {
  std::string name = GetString(request, "Name");
  OG_ASSIGN_OR_RETURN(auto txn, store_->BeginRead());
  OG_ASSIGN_OR_RETURN(Json crawler, LoadCrawler(txn.get(), name));
  return Json{{"Crawler", ToWire(std::move(crawler))}};
}

Result<Json> CrawlerService::GetCrawlers(const Json& request) {
  OG_ASSIGN_OR_RETURN(auto txn, store_->BeginRead());
  OG_ASSIGN_OR_RETURN(resource::Page page,
                      resource::ScanPage(txn.get(), kCrawler, "", request, resource::PageSize(request, 100)));
  Json crawlers = Json::array();
  for (const auto& row : page.rows) {
    OG_ASSIGN_OR_RETURN(Json crawler, ParseStored(row.doc, "crawler " + row.key));
    crawlers.push_back(ToWire(std::move(crawler)));
  }
  Json response{{"Crawlers", std::move(crawlers)}};
  if (!page.next_token.empty()) response["NextToken"] = page.next_token;
  return response;
}

Result<Json> CrawlerService::ListCrawlers(const Json& request) {
  const Json wanted = request.value("Tags", Json::object());
  OG_ASSIGN_OR_RETURN(auto txn, store_->BeginRead());
  auto tagged = [&](const store::Row& row) -> Result<bool> {
    return resource::HasTags(txn.get(), CrawlerArn(row.key), wanted);
  };
  return resource::ListNames(txn.get(), kCrawler, request, resource::PageSize(request, 100),
                             "CrawlerNames", tagged);
}

Result<Json> CrawlerService::BatchGetCrawlers(const Json& request) {
  OG_ASSIGN_OR_RETURN(auto txn, store_->BeginRead());
  Json crawlers = Json::array(), missing = Json::array();
  for (const Json& item : request.value("CrawlerNames", Json::array())) {
    std::string name = item.is_string() ? item.get<std::string>() : "";
    OG_ASSIGN_OR_RETURN(auto doc, txn->Get(kCrawler, name));
    if (!doc) {
      missing.push_back(name);
      continue;
    }
    OG_ASSIGN_OR_RETURN(Json crawler, ParseStored(*doc, "crawler " + name));
    crawlers.push_back(ToWire(std::move(crawler)));
  }
  return Json{{"Crawlers", std::move(crawlers)}, {"CrawlersNotFound", std::move(missing)}};
}

Result<Json> CrawlerService::UpdateCrawler(const Json& request) {
  std::string name = GetString(request, "Name");
  OG_ASSIGN_OR_RETURN(auto txn, store_->BeginWrite());
  OG_ASSIGN_OR_RETURN(Json crawler, LoadCrawler(txn.get(), name));
  if (crawler.value("State", "READY") != "READY")
    return Status(StatusCode::kCrawlerRunning, "Cannot update Crawler while running. Please stop crawl first.");
  OG_RETURN_NOT_OK(ApplyCrawlerInput(request, false, &crawler));
  if (request.contains("Description") && request["Description"].is_string() &&
      request["Description"].get<std::string>().empty())
    crawler.erase("Description");
  crawler["Version"] = crawler.value("Version", 1) + 1;
  crawler["LastUpdated"] = clock_->NowSeconds();
  OG_RETURN_NOT_OK(txn->Put(kCrawler, name, DumpJson(crawler)));
  OG_RETURN_NOT_OK(txn->Commit());
  SchedulesChanged();
  return Json::object();
}

Result<Json> CrawlerService::DeleteCrawler(const Json& request) {
  std::string name = GetString(request, "Name");
  OG_ASSIGN_OR_RETURN(auto txn, store_->BeginWrite());
  OG_ASSIGN_OR_RETURN(Json crawler, LoadCrawler(txn.get(), name));
  if (crawler.value("State", "READY") != "READY")
    return Status(StatusCode::kCrawlerRunning, "Crawler with name " + name + " has already started");
  OG_RETURN_NOT_OK(txn->Delete(kCrawler, name).status());
  OG_RETURN_NOT_OK(txn->DeletePrefix(kCrawl, store::PrefixOf({name})).status());
  OG_RETURN_NOT_OK(txn->Delete(kCrawlerState, name).status());
  OG_RETURN_NOT_OK(resource::DeleteTags(txn.get(), CrawlerArn(name)));
  OG_RETURN_NOT_OK(txn->Commit());
  SchedulesChanged();
  return Json::object();
}

// ---- crawls -----------------------------------------------------------------------------------

void CrawlerService::SchedulesChanged() {
  if (options_.schedules_changed) options_.schedules_changed();
}

Result<Json> CrawlerService::StartCrawlerSchedule(const Json& request) {
  std::string name = GetString(request, "CrawlerName");
  OG_ASSIGN_OR_RETURN(auto txn, store_->BeginWrite());
  OG_ASSIGN_OR_RETURN(Json crawler, LoadCrawler(txn.get(), name));
  if (!crawler.contains("Schedule") || !crawler["Schedule"].is_object())
    return Status(StatusCode::kNoSchedule, "Crawler " + name + " has no schedule");
  if (crawler["Schedule"].value("State", "") == "SCHEDULED")
    return Status(StatusCode::kSchedulerRunning, "The schedule of crawler " + name + " is already running");
  crawler["Schedule"]["State"] = "SCHEDULED";
  OG_RETURN_NOT_OK(txn->Put(kCrawler, name, DumpJson(crawler)));
  OG_RETURN_NOT_OK(txn->Commit());
  SchedulesChanged();
  return Json::object();
}

Result<Json> CrawlerService::StopCrawlerSchedule(const Json& request) {
  std::string name = GetString(request, "CrawlerName");
  OG_ASSIGN_OR_RETURN(auto txn, store_->BeginWrite());
  OG_ASSIGN_OR_RETURN(Json crawler, LoadCrawler(txn.get(), name));
  if (!crawler.contains("Schedule") || !crawler["Schedule"].is_object() ||
      crawler["Schedule"].value("State", "") != "SCHEDULED")
    return Status(StatusCode::kSchedulerNotRunning, "The schedule of crawler " + name + " is not running");
  crawler["Schedule"]["State"] = "NOT_SCHEDULED";
  OG_RETURN_NOT_OK(txn->Put(kCrawler, name, DumpJson(crawler)));
  OG_RETURN_NOT_OK(txn->Commit());
  SchedulesChanged();
  return Json::object();
}

Result<Json> CrawlerService::UpdateCrawlerSchedule(const Json& request) {
  std::string name = GetString(request, "CrawlerName");
  std::string expression = GetString(request, "Schedule");
  if (expression.empty()) return Status::InvalidInput("UpdateCrawlerSchedule needs a Schedule");
  OG_RETURN_NOT_OK(CronSchedule::Parse(expression).status());
  OG_ASSIGN_OR_RETURN(auto txn, store_->BeginWrite());
  OG_ASSIGN_OR_RETURN(Json crawler, LoadCrawler(txn.get(), name));
  Json schedule = crawler.value("Schedule", Json::object());
  if (!schedule.is_object()) schedule = Json::object();
  schedule["ScheduleExpression"] = expression;
  if (!schedule.contains("State")) schedule["State"] = "SCHEDULED";
  crawler["Schedule"] = schedule;
  crawler["Version"] = crawler.value("Version", 1) + 1;
  crawler["LastUpdated"] = clock_->NowSeconds();
  OG_RETURN_NOT_OK(txn->Put(kCrawler, name, DumpJson(crawler)));
  OG_RETURN_NOT_OK(txn->Commit());
  SchedulesChanged();
  return Json::object();
}

Result<std::vector<ScheduledCrawler>> ScheduledCrawlers(store::Transaction* txn) {
  OG_ASSIGN_OR_RETURN(auto rows, txn->Scan(kCrawler, store::ScanOptions{}));
  std::vector<ScheduledCrawler> out;
  for (const auto& row : rows) {
    Json crawler = ParseJson(row.doc);
    if (!crawler.is_object() || !crawler.contains("Schedule") || !crawler["Schedule"].is_object())
      continue;
    const Json& schedule = crawler["Schedule"];
    if (schedule.value("State", "") != "SCHEDULED") continue;
    out.push_back({row.key, schedule.value("ScheduleExpression", ""),
                   crawler.value("_schedule_last_fire_ms", static_cast<int64_t>(0))});
  }
  return out;
}

Result<bool> ClaimScheduledCrawl(store::Transaction* txn, const std::string& name, int64_t due_ms) {
  OG_ASSIGN_OR_RETURN(auto doc, txn->Get(kCrawler, name));
  if (!doc) return false;
  Json crawler = ParseJson(*doc);
  if (!crawler.is_object() || !crawler.contains("Schedule") || !crawler["Schedule"].is_object() ||
      crawler["Schedule"].value("State", "") != "SCHEDULED" ||
      crawler.value("_schedule_last_fire_ms", static_cast<int64_t>(0)) >= due_ms)
    return false;
  crawler["_schedule_last_fire_ms"] = due_ms;
  OG_RETURN_NOT_OK(txn->Put(kCrawler, name, DumpJson(crawler)));
  return true;
}

Result<Json> CrawlerService::StartCrawler(const Json& request) {
  OG_RETURN_NOT_OK(StartCrawl(GetString(request, "Name")).status());
  return Json::object();
}

void CrawlerService::AddCrawlEndListener(CrawlEndListener listener) {
  MutexLock lock(&mu_);
  listeners_.push_back(std::move(listener));
}

Result<std::string> CrawlerService::StartCrawl(const std::string& name, CrawlEndListener on_end) {
  JoinFinished();
  auto cancel = std::make_shared<std::atomic<bool>>(false);
  {
    MutexLock lock(&mu_);
    if (stopped_) return Status::Internal("the server is stopping");
    if (active_.count(name))
      return Status(StatusCode::kCrawlerRunning, "Crawler with name " + name + " has already started");
    active_[name].cancel = cancel;  // reserved: a second start waits for the store's answer below
  }
  auto unreserve = [&]() {
    MutexLock lock(&mu_);
    active_.erase(name);
    changed_.SignalAll();
  };
  std::string crawl_id = NewCrawlId();
  int64_t now_ms = clock_->NowMillis();
  Status st = [&]() -> Status {
    OG_ASSIGN_OR_RETURN(auto txn, store_->BeginWrite());
    OG_ASSIGN_OR_RETURN(Json crawler, LoadCrawler(txn.get(), name));
    if (crawler.value("State", "READY") != "READY")
      return Status(StatusCode::kCrawlerRunning, "Crawler with name " + name + " has already started");
    crawler["State"] = "RUNNING";
    crawler["_crawl_id"] = crawl_id;
    crawler["_crawl_start_ms"] = now_ms;
    OG_RETURN_NOT_OK(txn->Put(kCrawler, name, DumpJson(crawler)));
    Json crawl = {{"CrawlId", crawl_id}, {"State", "RUNNING"}, {"StartTime", now_ms / 1000.0},
                  {"LogGroup", kLogGroup}, {"LogStream", name}, {"MessagePrefix", crawl_id},
                  {"DPUHour", 0.0}};
    OG_RETURN_NOT_OK(txn->Put(kCrawl, CrawlKey(name, now_ms, crawl_id), DumpJson(crawl)));
    return txn->Commit();
  }();
  if (!st.ok()) {
    unreserve();
    return st;
  }
  MutexLock lock(&mu_);
  active_[name].thread = std::thread([this, name, crawl_id, cancel, on_end = std::move(on_end)]() {
    RunCrawl(name, crawl_id, cancel, on_end);
  });
  return crawl_id;
}

void CrawlerService::RunCrawl(std::string name, std::string crawl_id,
                              std::shared_ptr<std::atomic<bool>> cancel, CrawlEndListener on_end) {
  int64_t start_ms = clock_->NowMillis();
  CrawlLog log(name, crawl_id, options_.log);
  CrawlOutcome outcome;
  Json crawler;
  int64_t crawl_start_ms = start_ms;
  try {
    Result<Json> loaded = [&]() -> Result<Json> {
      OG_ASSIGN_OR_RETURN(auto txn, store_->BeginRead());
      return LoadCrawler(txn.get(), name);
    }();
    if (!loaded.ok()) {
      outcome.state = "FAILED";
      outcome.error = loaded.status().message();
    } else {
      crawler = *loaded;
      crawl_start_ms = crawler.value("_crawl_start_ms", start_ms);
      CrawlContext context{store_, catalog_, objects_, clock_, cancel.get(), &log,
                           options_.classify_threads, options_.jdbc};
      outcome = RunCrawlBody(crawler, context);
    }
  } catch (const std::exception& e) {
    outcome.state = "FAILED";
    outcome.error = std::string("internal error: ") + SanitizeUtf8(e.what());
  } catch (...) {
    outcome.state = "FAILED";
    outcome.error = "internal error";
  }
  if (outcome.state != "SUCCEEDED") outcome.writes.reset();  // a crawl's changes are all or nothing
  if (outcome.state == "FAILED") log.Error("Crawl failed: " + outcome.error);
  int64_t end_ms = clock_->NowMillis();
  double runtime = static_cast<double>(std::max<int64_t>(0, end_ms - crawl_start_ms)) / 1000.0;
  // Store the end: crawler READY with LastCrawl, the crawl record, metrics, recrawl state; in the
  // transaction of the crawl's catalog changes when it made any, so they commit together.
  Status stored = [&]() -> Status {
    std::unique_ptr<store::Transaction> txn = std::move(outcome.writes);
    if (!txn) {
      OG_ASSIGN_OR_RETURN(txn, store_->BeginWrite());
    }
    OG_ASSIGN_OR_RETURN(auto doc, txn->Get(kCrawler, name));
    if (!doc) return txn->Commit();
    Json current = ParseJson(*doc);
    if (!current.is_object()) current = crawler.is_object() ? crawler : Json{{"Name", name}};
    current["State"] = "READY";
    current.erase("_crawl_id");
    current.erase("_crawl_start_ms");
    Json last = {{"Status", outcome.state}, {"LogGroup", kLogGroup}, {"LogStream", name},
                 {"MessagePrefix", crawl_id}, {"StartTime", crawl_start_ms / 1000.0}};
    std::string message = outcome.error;
    if (message.empty() && !outcome.skipped.empty()) {
      message = std::to_string(outcome.skipped.size()) + " file(s) or folder(s) skipped: " + outcome.skipped[0];
      if (outcome.skipped.size() > 1) message += " (and more: see the crawl's log)";
    }
    // The message names keys, paths and tables a client chose: one line, control characters escaped.
    message = TruncateUtf8(EscapeControlCharacters(message), 2048);
    if (!message.empty()) last["ErrorMessage"] = message;
    current["LastCrawl"] = last;
    Json metrics = current.value("_metrics", Json::object());
    Json runtimes = metrics.value("runtimes", Json::array());
    runtimes.push_back(runtime);
    while (runtimes.size() > 20) runtimes.erase(runtimes.begin());
    metrics["runtimes"] = runtimes;
    metrics["TablesCreated"] = outcome.tables_created;
    metrics["TablesUpdated"] = outcome.tables_updated;
    metrics["TablesDeleted"] = outcome.tables_deleted;
    current["_metrics"] = metrics;
    OG_RETURN_NOT_OK(txn->Put(kCrawler, name, DumpJson(current)));
    std::string key = CrawlKey(name, crawl_start_ms, crawl_id);
    OG_ASSIGN_OR_RETURN(auto record_doc, txn->Get(kCrawl, key));
    Json record = record_doc ? ParseJson(*record_doc) : Json::object();
    if (!record.is_object()) record = Json::object();
    record["CrawlId"] = crawl_id;
    record["State"] = outcome.state == "SUCCEEDED" ? "COMPLETED" : outcome.state == "CANCELLED" ? "STOPPED" : "FAILED";
    record["EndTime"] = end_ms / 1000.0;
    record["Summary"] = TruncateUtf8(outcome.Summary(), 255);
    if (!message.empty()) record["ErrorMessage"] = message;
    OG_RETURN_NOT_OK(txn->Put(kCrawl, key, DumpJson(record)));
    // Keep the newest kCrawlHistory records.
    OG_ASSIGN_OR_RETURN(int64_t count, txn->Count(kCrawl, store::PrefixOf({name})));
    if (count > static_cast<int64_t>(kCrawlHistory)) {
      store::ScanOptions scan;
      scan.prefix = store::PrefixOf({name});
      scan.keys_only = true;
      scan.limit = count - static_cast<int64_t>(kCrawlHistory);
      OG_ASSIGN_OR_RETURN(auto old, txn->Scan(kCrawl, scan));
      for (const auto& row : old) OG_RETURN_NOT_OK(txn->Delete(kCrawl, row.key).status());
    }
    if (outcome.state == "SUCCEEDED" && outcome.new_state.is_object())
      OG_RETURN_NOT_OK(txn->Put(kCrawlerState, name, DumpJson(outcome.new_state)));
    if (options_.crawl_ended)
      OG_RETURN_NOT_OK(options_.crawl_ended(txn.get(), crawl_id, name, outcome.state));
    return txn->Commit();
  }();
  if (!stored.ok()) OG_LOG(kError, "crawler " << name << ": cannot store the crawl's end: " << stored.message());
  log.Benchmark("Crawler has finished running and is in state READY");
  log.Flush();
  std::vector<CrawlEndListener> listeners;
  {
    MutexLock lock(&mu_);
    auto it = active_.find(name);
    if (it != active_.end()) {
      finished_.push_back(std::move(it->second.thread));
      active_.erase(it);
    }
    listeners = listeners_;
    changed_.SignalAll();
  }
  try {
    if (on_end) on_end(name, outcome.state);
    for (const auto& listener : listeners) listener(name, outcome.state);
  } catch (...) {
    OG_LOG(kError, "crawler " << name << ": a crawl-end listener threw");
  }
}

void CrawlerService::JoinFinished() {
  std::vector<std::thread> done;
  {
    MutexLock lock(&mu_);
    std::vector<std::thread> keep;
    for (auto& t : finished_) {
      if (t.get_id() == std::this_thread::get_id()) keep.push_back(std::move(t));
      else done.push_back(std::move(t));
    }
    finished_ = std::move(keep);
  }
  for (auto& t : done)
    if (t.joinable()) t.join();
}

void CrawlerService::WaitIdle(const std::string& name) {
  {
    MutexLock lock(&mu_);
    while (active_.count(name)) changed_.Wait(&mu_);
  }
  JoinFinished();
}

void CrawlerService::Stop() {
  {
    MutexLock lock(&mu_);
    stopped_ = true;
    for (auto& [name, active] : active_) active.cancel->store(true);
    while (!active_.empty()) changed_.Wait(&mu_);
  }
  JoinFinished();
}

Result<Json> CrawlerService::StopCrawler(const Json& request) {
  std::string name = GetString(request, "Name");
  {
    OG_ASSIGN_OR_RETURN(auto txn, store_->BeginWrite());
    OG_ASSIGN_OR_RETURN(Json crawler, LoadCrawler(txn.get(), name));
    std::string state = crawler.value("State", "READY");
    if (state == "READY") return Status(StatusCode::kCrawlerNotRunning, "Crawler with name " + name + " isn't running.");
    if (state == "STOPPING") return Status(StatusCode::kCrawlerStopping, "Crawler with name " + name + " is stopping.");
    crawler["State"] = "STOPPING";
    OG_RETURN_NOT_OK(txn->Put(kCrawler, name, DumpJson(crawler)));
    OG_RETURN_NOT_OK(txn->Commit());
  }
  MutexLock lock(&mu_);
  auto it = active_.find(name);
  if (it != active_.end()) it->second.cancel->store(true);
  return Json::object();
}

Status CrawlerService::Recover() {
  OG_ASSIGN_OR_RETURN(auto txn, store_->BeginWrite());
  OG_ASSIGN_OR_RETURN(auto rows, txn->Scan(kCrawler, store::ScanOptions{}));
  double now = clock_->NowSeconds();
  for (const auto& row : rows) {
    Json crawler = ParseJson(row.doc);
    if (!crawler.is_object() || crawler.value("State", "READY") == "READY") continue;
    const std::string message = "The server stopped while the crawl was running";
    std::string id = crawler.value("_crawl_id", "");
    int64_t start_ms = crawler.value("_crawl_start_ms", static_cast<int64_t>(0));
    crawler["State"] = "READY";
    crawler["LastCrawl"] = {{"Status", "FAILED"}, {"ErrorMessage", message}, {"LogGroup", kLogGroup},
                            {"LogStream", row.key}, {"MessagePrefix", id}, {"StartTime", start_ms / 1000.0}};
    crawler.erase("_crawl_id");
    crawler.erase("_crawl_start_ms");
    OG_RETURN_NOT_OK(txn->Put(kCrawler, row.key, DumpJson(crawler)));
    std::string key = CrawlKey(row.key, start_ms, id);
    OG_ASSIGN_OR_RETURN(auto record_doc, txn->Get(kCrawl, key));
    if (record_doc) {
      Json record = ParseJson(*record_doc);
      if (record.is_object()) {
        record["State"] = "FAILED";
        record["EndTime"] = now;
        record["ErrorMessage"] = message;
        OG_RETURN_NOT_OK(txn->Put(kCrawl, key, DumpJson(record)));
      }
    }
    if (options_.crawl_ended && !id.empty())
      OG_RETURN_NOT_OK(options_.crawl_ended(txn.get(), id, row.key, "FAILED"));
  }
  return txn->Commit();
}

Result<Json> CrawlerService::GetCrawlerMetrics(const Json& request) {
  OG_ASSIGN_OR_RETURN(auto txn, store_->BeginRead());
  std::vector<Json> crawlers;
  std::string next_token;
  if (request.contains("CrawlerNameList") && request["CrawlerNameList"].is_array() &&
      !request["CrawlerNameList"].empty()) {
    for (const Json& item : request["CrawlerNameList"]) {
      if (!item.is_string()) continue;
      OG_ASSIGN_OR_RETURN(auto doc, txn->Get(kCrawler, item.get<std::string>()));
      if (!doc) continue;
      OG_ASSIGN_OR_RETURN(Json crawler, ParseStored(*doc, "crawler"));
      crawlers.push_back(std::move(crawler));
    }
  } else {
    OG_ASSIGN_OR_RETURN(resource::Page page,
                        resource::ScanPage(txn.get(), kCrawler, "", request, resource::PageSize(request, 100)));
    for (const auto& row : page.rows) {
      OG_ASSIGN_OR_RETURN(Json crawler, ParseStored(row.doc, "crawler " + row.key));
      crawlers.push_back(std::move(crawler));
    }
    next_token = page.next_token;
  }
  Json list = Json::array();
  for (const Json& crawler : crawlers) {
    Json metrics = crawler.value("_metrics", Json::object());
    std::vector<double> runtimes;
    for (const Json& r : metrics.value("runtimes", Json::array()))
      if (r.is_number()) runtimes.push_back(r.get<double>());
    double last = runtimes.empty() ? 0.0 : runtimes.back();
    double median = 0;
    if (!runtimes.empty()) {
      std::sort(runtimes.begin(), runtimes.end());
      size_t n = runtimes.size();
      median = n % 2 ? runtimes[n / 2] : (runtimes[n / 2 - 1] + runtimes[n / 2]) / 2;
    }
    list.push_back({{"CrawlerName", crawler.value("Name", "")},
                    {"TimeLeftSeconds", 0.0},
                    {"StillEstimating", crawler.value("State", "READY") != "READY"},
                    {"LastRuntimeSeconds", last},
                    {"MedianRuntimeSeconds", median},
                    {"TablesCreated", metrics.value("TablesCreated", 0)},
                    {"TablesUpdated", metrics.value("TablesUpdated", 0)},
                    {"TablesDeleted", metrics.value("TablesDeleted", 0)}});
  }
  Json response{{"CrawlerMetricsList", std::move(list)}};
  if (!next_token.empty()) response["NextToken"] = next_token;
  return response;
}

Result<Json> CrawlerService::ListCrawls(const Json& request) {
  std::string name = GetString(request, "CrawlerName");
  OG_ASSIGN_OR_RETURN(auto txn, store_->BeginRead());
  OG_RETURN_NOT_OK(LoadCrawler(txn.get(), name).status());
  store::ScanOptions scan;
  scan.prefix = store::PrefixOf({name});
  OG_ASSIGN_OR_RETURN(auto rows, txn->Scan(kCrawl, scan));
  Json filters = request.value("Filters", Json::array());
  // Newest first; the token is the number of matching crawls already returned.
  int64_t skip = 0;
  std::string token = GetString(request, "NextToken");
  if (!token.empty()) {
    char* end = nullptr;
    skip = std::strtoll(token.c_str(), &end, 10);
    if (end != token.c_str() + token.size() || skip < 0) return Status::InvalidInput("Invalid NextToken");
  }
  int64_t limit = resource::PageSize(request, 20);
  Json crawls = Json::array();
  int64_t matched = 0;
  bool more = false;
  for (auto it = rows.rbegin(); it != rows.rend(); ++it) {
    Json crawl = ParseJson(it->doc);
    if (!crawl.is_object()) continue;
    OG_ASSIGN_OR_RETURN(bool keep, MatchesFilters(crawl, filters));
    if (!keep) continue;
    if (matched++ < skip) continue;
    if (static_cast<int64_t>(crawls.size()) >= limit) {
      more = true;
      break;
    }
    crawls.push_back(std::move(crawl));
  }
  Json response{{"Crawls", std::move(crawls)}};
  if (more) response["NextToken"] = std::to_string(skip + limit);
  return response;
}

// ---- classifiers ------------------------------------------------------------------------------

Result<Json> CrawlerService::CreateClassifier(const Json& request) {
  OG_ASSIGN_OR_RETURN(auto classifier, RequestClassifier(request));
  auto& [kind, body] = classifier;
  std::string name = body.value("Name", "");
  double now = clock_->NowSeconds();
  body["CreationTime"] = now;
  body["LastUpdated"] = now;
  body["Version"] = 1;
  OG_ASSIGN_OR_RETURN(auto txn, store_->BeginWrite());
  Status st = txn->Insert(kClassifier, name, DumpJson(Json{{kind, body}}));
  if (st.code() == StatusCode::kAlreadyExists)
    return Status::AlreadyExists("Classifier with name " + name + " already exists");
  OG_RETURN_NOT_OK(st);
  OG_RETURN_NOT_OK(txn->Commit());
  return Json::object();
}

Result<Json> CrawlerService::GetClassifier(const Json& request) {
  std::string name = GetString(request, "Name");
  OG_ASSIGN_OR_RETURN(auto txn, store_->BeginRead());
  OG_ASSIGN_OR_RETURN(auto doc, txn->Get(kClassifier, name));
  if (!doc) return Status::EntityNotFound("Classifier with name " + name + " does not exist");
  OG_ASSIGN_OR_RETURN(Json classifier, ParseStored(*doc, "classifier " + name));
  return Json{{"Classifier", std::move(classifier)}};
}

Result<Json> CrawlerService::GetClassifiers(const Json& request) {
  OG_ASSIGN_OR_RETURN(auto txn, store_->BeginRead());
  OG_ASSIGN_OR_RETURN(resource::Page page,
                      resource::ScanPage(txn.get(), kClassifier, "", request, resource::PageSize(request, 100)));
  Json list = Json::array();
  for (const auto& row : page.rows) {
    OG_ASSIGN_OR_RETURN(Json classifier, ParseStored(row.doc, "classifier " + row.key));
    list.push_back(std::move(classifier));
  }
  Json response{{"Classifiers", std::move(list)}};
  if (!page.next_token.empty()) response["NextToken"] = page.next_token;
  return response;
}

Result<Json> CrawlerService::UpdateClassifier(const Json& request) {
  OG_ASSIGN_OR_RETURN(auto classifier, RequestClassifier(request));
  auto& [kind, body] = classifier;
  std::string name = body.value("Name", "");
  OG_ASSIGN_OR_RETURN(auto txn, store_->BeginWrite());
  OG_ASSIGN_OR_RETURN(auto doc, txn->Get(kClassifier, name));
  if (!doc) return Status::EntityNotFound("Classifier with name " + name + " does not exist");
  OG_ASSIGN_OR_RETURN(Json stored, ParseStored(*doc, "classifier " + name));
  if (!stored.contains(kind))
    return Status::InvalidInput("Classifier " + name + " is not a " + kind + "; its type cannot change");
  Json merged = stored[kind];
  for (auto& [k, v] : body.items()) merged[k] = v;
  merged["LastUpdated"] = clock_->NowSeconds();
  merged["Version"] = merged.value("Version", 1) + 1;
  OG_RETURN_NOT_OK(txn->Put(kClassifier, name, DumpJson(Json{{kind, merged}})));
  OG_RETURN_NOT_OK(txn->Commit());
  return Json::object();
}

Result<Json> CrawlerService::DeleteClassifier(const Json& request) {
  std::string name = GetString(request, "Name");
  OG_ASSIGN_OR_RETURN(auto txn, store_->BeginWrite());
  OG_ASSIGN_OR_RETURN(bool existed, txn->Delete(kClassifier, name));
  if (!existed) return Status::EntityNotFound("Classifier with name " + name + " does not exist");
  OG_RETURN_NOT_OK(txn->Commit());
  return Json::object();
}

}  // namespace openglue::crawler
