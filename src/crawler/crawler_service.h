// CrawlerService: Glue crawlers and classifiers.
//
// Operations (Glue request -> response documents, already validated against the service model):
// CreateCrawler, GetCrawler, GetCrawlers, ListCrawlers, BatchGetCrawlers, UpdateCrawler,
// DeleteCrawler, StartCrawler, StopCrawler, GetCrawlerMetrics, ListCrawls; CreateClassifier,
// GetClassifier, GetClassifiers, UpdateClassifier, DeleteClassifier.
//
// A crawler is READY, RUNNING or STOPPING. StartCrawler stores the crawler RUNNING and a crawl
// record RUNNING, then crawls on a background thread of its own: the API never waits for a crawl.
// The crawl lists its S3 targets through the object store, classifies the files (classify.h),
// draws the tables (plan.h) and writes tables and partitions through the catalog, following
// the crawler's SchemaChangePolicy, RecrawlPolicy and Configuration (docs/crawlers.md). It ends
// SUCCEEDED, FAILED (an error: the message is LastCrawl.ErrorMessage) or CANCELLED (StopCrawler
// before the catalog was written; once writing has begun, the crawl finishes it). Every end is
// stored (crawler READY, LastCrawl, the crawl record, metrics) before listeners hear of it.
// A crawl that was running when the server stopped is ended FAILED by Recover().
//
// Progress and findings go to the crawl log (CrawlerServiceOptions::log: in the server, the
// CloudWatch Logs group /aws-glue/crawlers, stream = crawler name), one line per event, each
// prefixed with the crawl id in brackets as Glue does.
//
// Thread-safe. Locking: one mutex guards the table of active crawls (threads, cancel flags) and
// the listeners; store commits and crawling happen outside it.
#pragma once

#include <atomic>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "catalog/catalog.h"
#include "common/clock.h"
#include "common/json.h"
#include "common/random.h"
#include "common/status.h"
#include "common/thread_annotations.h"
#include "store/metadata_store.h"
#include "storage/object_store.h"

namespace openglue::crawler {

// Where a crawl's log lines go: `write(stream, lines)` appends lines (without newlines) to the
// stream and makes them readable. Null: lines are dropped.
using CrawlLogWriter = std::function<void(const std::string& stream, const std::vector<std::string>& lines)>;

// Discovers the tables of a JDBC target: `request` is {"url", "user", "password", "path",
// "exclusions"}; the answer {"vendor", "tables": [{"database", "schema", "name", "columns":
// [{"name", "type"}]}]} or {"error": message}. The server runs the runtime's
// openglue_runtime.crawl_jdbc for it (database drivers are Python's); tests may give their own.
using JdbcSchemas = std::function<Result<Json>(const Json& request)>;

struct CrawlerServiceOptions {
  std::string region = "us-east-1";
  std::string account_id = "000000000000";
  // Where s3:// targets are read. Borrowed; must outlive the service. Null: the embedded store
  // over <data_dir>/s3.
  storage::ObjectStore* objects = nullptr;
  std::string data_dir;
  CrawlLogWriter log;
  int classify_threads = 4;  // files classified in parallel within one crawl
  JdbcSchemas jdbc;          // null: a crawl with a JDBC target fails saying so
  // Told of every crawl's end ("SUCCEEDED", "FAILED" or "CANCELLED") inside the transaction that
  // stores it, also for crawls that Recover ends: triggers and workflows (src/schedule) record
  // it durably with the crawl. An error rolls that transaction back. Empty: nobody is told.
  std::function<Status(store::Transaction* txn, const std::string& crawl_id,
                       const std::string& crawler, const std::string& state)>
      crawl_ended;
  // Told after a crawler's schedule may have changed (create, update, delete, the schedule
  // operations): the schedule module reloads the crawler schedules it fires. Empty: nobody.
  std::function<void()> schedules_changed;
};

// A crawler whose Schedule is SCHEDULED, for the schedule module that fires it.
struct ScheduledCrawler {
  std::string name;
  std::string expression;     // cron(...)
  int64_t last_fire_ms = 0;   // the due time of its last scheduled crawl, 0 for none
};
Result<std::vector<ScheduledCrawler>> ScheduledCrawlers(store::Transaction* txn);
// Records in `txn` that crawler `name`'s schedule fired for `due_ms`. False (nothing written)
// when the crawler is gone, no longer SCHEDULED, or already fired for `due_ms` or later.
Result<bool> ClaimScheduledCrawl(store::Transaction* txn, const std::string& name, int64_t due_ms);

// The final state of a crawl as triggers see it: "SUCCEEDED", "FAILED" or "CANCELLED".
using CrawlEndListener = std::function<void(const std::string& crawler, const std::string& state)>;

// For resource::TagService::Register("crawler", ...): OK when resource {"crawler", name} names an
// existing crawler, else EntityNotFound.
Status CrawlerExists(store::Transaction* txn, const std::vector<std::string>& resource);

class CrawlerService {
 public:
  // Borrowed: store, catalog, clock, random; they must outlive the service.
  static Result<std::unique_ptr<CrawlerService>> Make(store::MetadataStore* store,
                                                      catalog::Catalog* catalog, const Clock* clock,
                                                      Random* random, CrawlerServiceOptions options);
  ~CrawlerService();

  using Operation = Result<Json> (CrawlerService::*)(const Json& request);
  static const std::vector<std::pair<std::string, Operation>>& Operations();

  Result<Json> CreateCrawler(const Json& request);
  Result<Json> GetCrawler(const Json& request);
  Result<Json> GetCrawlers(const Json& request);
  Result<Json> ListCrawlers(const Json& request);
  Result<Json> BatchGetCrawlers(const Json& request);
  Result<Json> UpdateCrawler(const Json& request);
  Result<Json> DeleteCrawler(const Json& request);
  Result<Json> StartCrawler(const Json& request);
  // The crawler's Schedule.State: SCHEDULED (fires on its cron expression) or NOT_SCHEDULED.
  // NoScheduleException without a schedule, SchedulerRunningException when already SCHEDULED,
  // SchedulerNotRunningException when not; UpdateCrawlerSchedule checks the expression.
  Result<Json> StartCrawlerSchedule(const Json& request);
  Result<Json> StopCrawlerSchedule(const Json& request);
  Result<Json> UpdateCrawlerSchedule(const Json& request);
  Result<Json> StopCrawler(const Json& request);
  Result<Json> GetCrawlerMetrics(const Json& request);
  Result<Json> ListCrawls(const Json& request);
  Result<Json> CreateClassifier(const Json& request);
  Result<Json> GetClassifier(const Json& request);
  Result<Json> GetClassifiers(const Json& request);
  Result<Json> UpdateClassifier(const Json& request);
  Result<Json> DeleteClassifier(const Json& request);

  // For the schedule module (triggers, workflows, cron schedules): starts crawler `name` exactly
  // as StartCrawler does (EntityNotFound, CrawlerRunning) and, when it started, calls `on_end`
  // once, on the crawl's thread, after the crawl's end is stored, with "SUCCEEDED", "FAILED" or
  // "CANCELLED". `on_end` may be null. Returns the crawl id.
  Result<std::string> StartCrawl(const std::string& name, CrawlEndListener on_end = nullptr)
      EXCLUDES(mu_);
  // Calls `listener` for the end of every crawl from now on (whoever started it), as `on_end`
  // above. Listeners must not call back into Stop().
  void AddCrawlEndListener(CrawlEndListener listener) EXCLUDES(mu_);

  // Ends crawls left RUNNING or STOPPING by an earlier server process: FAILED, with a message.
  // Call once before serving.
  Status Recover();
  // Cancels running crawls and waits for their threads. The service takes no new crawl after.
  void Stop() EXCLUDES(mu_);
  // Waits until crawler `name` has no crawl in progress (tests).
  void WaitIdle(const std::string& name) EXCLUDES(mu_);

 private:
  void SchedulesChanged();
  CrawlerService(store::MetadataStore* store, catalog::Catalog* catalog, const Clock* clock,
                 Random* random, CrawlerServiceOptions options);

  struct Active {
    std::thread thread;
    std::shared_ptr<std::atomic<bool>> cancel;
    bool done = false;
  };
  class Crawl;

  Result<Json> LoadCrawler(store::Transaction* txn, const std::string& name);
  Json ToWire(Json crawler) const;
  std::string CrawlerArn(const std::string& name) const;
  // The crawl's body on its thread; ends it (stores the outcome) and notifies.
  void RunCrawl(std::string name, std::string crawl_id, std::shared_ptr<std::atomic<bool>> cancel,
                CrawlEndListener on_end) EXCLUDES(mu_);
  void JoinFinished() EXCLUDES(mu_);
  std::string NewCrawlId() EXCLUDES(random_mu_);

  store::MetadataStore* store_;
  catalog::Catalog* catalog_;
  const Clock* clock_;
  Random* random_;
  CrawlerServiceOptions options_;
  std::unique_ptr<storage::ObjectStore> own_objects_;
  storage::ObjectStore* objects_ = nullptr;

  Mutex random_mu_;
  Mutex mu_;
  CondVar changed_;
  std::map<std::string, Active> active_ GUARDED_BY(mu_);
  std::vector<std::thread> finished_ GUARDED_BY(mu_);
  std::vector<CrawlEndListener> listeners_ GUARDED_BY(mu_);
  bool stopped_ GUARDED_BY(mu_) = false;
};

}  // namespace openglue::crawler
