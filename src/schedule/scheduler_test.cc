// Scheduler with an injected clock over a real JobService whose processes are faked: scheduled
// triggers fire on their minute and not again after a restart, missed fires are not replayed,
// an AND predicate waits for both runs, and a recorded fire carried out twice (a crash before
// its row was deleted) starts its run once. No process starts and nothing sleeps.
#include "schedule/scheduler.h"

#include <gtest/gtest.h>

#include <chrono>
#include <filesystem>
#include <thread>
#include <fstream>

#include "catalog/catalog.h"
#include "common/cron.h"
#include "crawler/crawler_service.h"
#include "jobs/process_launcher_fake.h"
#include "schedule/schedule_store.h"
#include "store/sqlite_store.h"

namespace openglue::schedule {
namespace {

using jobs::FakeLauncher;
using NoLogs = jobs::FakeLogs;

// 2026-12-01 10:00:30 UTC.
const int64_t kStart = (DaysFromCivil(2026, 12, 1) * 1440 + 600) * 60000 + 30000;

class SchedulerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char pattern[] = "/tmp/og-schedule-XXXXXX";
    dir_ = mkdtemp(pattern);
    std::filesystem::create_directories(dir_ + "/logs");
    std::filesystem::create_directories(dir_ + "/s3/scripts");
    std::ofstream(dir_ + "/s3/scripts/job.py") << "print('hello')\n";
    auto store = store::SqliteStore::Make(dir_ + "/catalog.db");
    ASSERT_TRUE(store.ok());
    store_ = std::move(*store);
    logs_ = std::make_unique<NoLogs>(dir_ + "/logs");
    jobs::JobServiceOptions options;
    options.data_dir = dir_;
    options.endpoint = "http://127.0.0.1:1";
    options.run_ended.record = &RecordJobRunEnded;
    auto jobs = jobs::JobService::Make(store_.get(), &clock_, &random_, &launcher_, logs_.get(),
                                       jobs::RunCredentials{}, options);
    ASSERT_TRUE(jobs.ok());
    jobs_ = std::move(*jobs);
    MakeScheduler();
  }
  void TearDown() override {
    scheduler_.reset();
    jobs_.reset();
    std::filesystem::remove_all(dir_);
  }
  // A new scheduler over the same store: what a server restart does.
  void MakeScheduler(SchedulerOptions options = {}) {
    scheduler_.reset();
    auto made = Scheduler::Make(store_.get(), &clock_, &scheduler_random_, jobs_.get(),
                                std::move(options));
    ASSERT_TRUE(made.ok());
    scheduler_ = std::move(*made);
  }
  void CreateJob(const std::string& name) {
    auto created = jobs_->CreateJob(Json{{"Name", name}, {"Role", "local"},
                                         {"ExecutionProperty", {{"MaxConcurrentRuns", 10}}},
                                         {"Command", {{"Name", "pythonshell"},
                                                      {"ScriptLocation", "s3://scripts/job.py"}}}});
    ASSERT_TRUE(created.ok()) << created.status().ToString();
  }
  void Ok(const Result<Json>& result) { ASSERT_TRUE(result.ok()) << result.status().ToString(); }
  Json Runs(const std::string& job) {
    auto runs = jobs_->GetJobRuns(Json{{"JobName", job}});
    EXPECT_TRUE(runs.ok()) << runs.status().ToString();
    return runs.ok() ? (*runs)["JobRuns"] : Json::array();
  }
  // Runs every started job to the end with exit code `code`, and lets the scheduler see it.
  void FinishRuns(int code) {
    jobs_->Tick();  // launch
    launcher_.ExitAll(code);
    jobs_->Tick();  // notice the exits
    scheduler_->RunOnce();
  }

  std::string dir_;
  FakeClock clock_{kStart};
  SeededRandom random_{7};
  SeededRandom scheduler_random_{11};  // its own: a SeededRandom is not thread-safe
  FakeLauncher launcher_;
  std::unique_ptr<NoLogs> logs_;
  std::unique_ptr<store::MetadataStore> store_;
  std::unique_ptr<jobs::JobService> jobs_;
  std::unique_ptr<Scheduler> scheduler_;
};

TEST_F(SchedulerTest, ScheduledTriggerFiresOnItsMinuteOnceAndMissedFiresAreNotReplayed) {
  CreateJob("nightly");
  Ok(scheduler_->CreateTrigger(Json{{"Name", "every5"}, {"Type", "SCHEDULED"},
                                    {"Schedule", "cron(*/5 * * * ? *)"}, {"StartOnCreation", true},
                                    {"Actions", {{{"JobName", "nightly"}}}}}));
  const int64_t due = kStart - 30000 + 5 * 60000;  // 10:05:00
  EXPECT_EQ(scheduler_->RunOnce(), due);
  clock_.Set(due - 1);
  scheduler_->RunOnce();
  EXPECT_EQ(Runs("nightly").size(), 0u);
  clock_.Set(due);
  EXPECT_EQ(scheduler_->RunOnce(), due + 5 * 60000);
  Json runs = Runs("nightly");
  ASSERT_EQ(runs.size(), 1u);
  EXPECT_EQ(runs[0]["TriggerName"], "every5");
  EXPECT_DOUBLE_EQ(runs[0]["StartedOn"].get<double>(), due / 1000.0);

  // A restart within the same minute does not fire it again.
  clock_.Set(due + 500);
  MakeScheduler();
  EXPECT_EQ(scheduler_->RunOnce(), due + 5 * 60000);
  EXPECT_EQ(Runs("nightly").size(), 1u);

  // Down from 10:05:00.5 to 10:31: the fires of 10:10 ... 10:30 are not replayed.
  clock_.Set(due + 26 * 60000);
  MakeScheduler();
  EXPECT_EQ(scheduler_->RunOnce(), due + 30 * 60000);
  EXPECT_EQ(Runs("nightly").size(), 1u);

  // Deactivated: no fire.
  Ok(scheduler_->StopTrigger(Json{{"Name", "every5"}}));
  clock_.Set(due + 30 * 60000);
  EXPECT_EQ(scheduler_->RunOnce(), -1);
  EXPECT_EQ(Runs("nightly").size(), 1u);
}

TEST_F(SchedulerTest, AndPredicateWaitsForBothRunsAndConsumesThem) {
  for (const char* job : {"a", "b", "c"}) CreateJob(job);
  Json predicate{{"Logical", "AND"},
                 {"Conditions", {{{"LogicalOperator", "EQUALS"}, {"JobName", "a"}, {"State", "SUCCEEDED"}},
                                 {{"LogicalOperator", "EQUALS"}, {"JobName", "b"}, {"State", "SUCCEEDED"}}}}};
  Ok(scheduler_->CreateTrigger(Json{{"Name", "both"}, {"Type", "CONDITIONAL"},
                                    {"StartOnCreation", true}, {"Predicate", predicate},
                                    {"Actions", {{{"JobName", "c"}}}}}));
  Ok(jobs_->StartJobRun(Json{{"JobName", "a"}}));
  FinishRuns(0);
  EXPECT_EQ(Runs("c").size(), 0u);
  Ok(jobs_->StartJobRun(Json{{"JobName", "a"}}));  // A again: still waiting for B
  FinishRuns(0);
  EXPECT_EQ(Runs("c").size(), 0u);
  Ok(jobs_->StartJobRun(Json{{"JobName", "b"}}));
  FinishRuns(0);
  ASSERT_EQ(Runs("c").size(), 1u);
  FinishRuns(0);  // C's own end fires nothing
  Ok(jobs_->StartJobRun(Json{{"JobName", "b"}}));
  FinishRuns(1);  // B fails: no condition satisfied
  Ok(jobs_->StartJobRun(Json{{"JobName", "b"}}));
  FinishRuns(0);  // B succeeds, but A's runs were consumed
  EXPECT_EQ(Runs("c").size(), 1u);
}

TEST_F(SchedulerTest, ARecordedFireCarriedOutTwiceStartsItsRunOnce) {
  CreateJob("once");
  Ok(scheduler_->CreateTrigger(Json{{"Name", "now"}, {"Type", "ON_DEMAND"},
                                    {"Actions", {{{"JobName", "once"}}}}}));
  Ok(scheduler_->StartTrigger(Json{{"Name", "now"}}));
  // The fire as recorded, before it was carried out.
  std::vector<store::Row> fires;
  {
    auto txn = store_->BeginRead();
    ASSERT_TRUE(txn.ok());
    auto rows = (*txn)->Scan(internal::kFire, store::ScanOptions{});
    ASSERT_TRUE(rows.ok());
    fires = *rows;
  }
  ASSERT_EQ(fires.size(), 1u);
  scheduler_->RunOnce();
  ASSERT_EQ(Runs("once").size(), 1u);
  // As if the server died after starting the run but before deleting the fire's row.
  {
    auto txn = store_->BeginWrite();
    ASSERT_TRUE(txn.ok());
    ASSERT_TRUE((*txn)->Put(internal::kFire, fires[0].key, fires[0].doc).ok());
    ASSERT_TRUE((*txn)->Commit().ok());
  }
  MakeScheduler();
  scheduler_->RunOnce();
  EXPECT_EQ(Runs("once").size(), 1u);
}

// The seam the crawler module fills in: a workflow run starts a crawler through start_crawler,
// the crawl's end (RecordCrawlEnded) completes that action and satisfies crawl conditions.
TEST_F(SchedulerTest, CrawlerActionsRunThroughTheCrawlerSeam) {
  std::vector<std::string> crawls;
  SchedulerOptions options;
  options.start_crawler = [&crawls](const std::string& name) {
    crawls.push_back(name);
    return Status::OK();
  };
  MakeScheduler(options);
  CreateJob("load");
  Ok(scheduler_->CreateWorkflow(Json{{"Name", "wf"}}));
  Ok(scheduler_->CreateTrigger(Json{{"Name", "go"}, {"WorkflowName", "wf"}, {"Type", "ON_DEMAND"},
                                    {"Actions", {{{"CrawlerName", "raw"}}}}}));
  Ok(scheduler_->CreateTrigger(
      Json{{"Name", "crawled"}, {"WorkflowName", "wf"}, {"Type", "CONDITIONAL"},
           {"StartOnCreation", true}, {"Actions", {{{"JobName", "load"}}}},
           {"Predicate", {{"Conditions", {{{"LogicalOperator", "EQUALS"}, {"CrawlerName", "raw"},
                                           {"CrawlState", "SUCCEEDED"}}}}}}}));
  auto started = scheduler_->StartWorkflowRun(Json{{"Name", "wf"}});
  ASSERT_TRUE(started.ok()) << started.status().ToString();
  std::string run_id = (*started)["RunId"];
  scheduler_->RunOnce();
  ASSERT_EQ(crawls, std::vector<std::string>{"raw"});
  EXPECT_EQ(Runs("load").size(), 0u);
  {
    auto txn = store_->BeginWrite();
    ASSERT_TRUE(txn.ok());
    ASSERT_TRUE(RecordCrawlEnded(txn->get(), "crawl-1", "raw", "SUCCEEDED").ok());
    ASSERT_TRUE((*txn)->Commit().ok());
  }
  scheduler_->RunOnce();
  Json runs = Runs("load");
  ASSERT_EQ(runs.size(), 1u);
  EXPECT_EQ(runs[0]["Arguments"]["--WORKFLOW_RUN_ID"], run_id);
  FinishRuns(0);
  auto run = scheduler_->GetWorkflowRun(Json{{"Name", "wf"}, {"RunId", run_id}, {"IncludeGraph", true}});
  ASSERT_TRUE(run.ok());
  EXPECT_EQ((*run)["Run"]["Status"], "COMPLETED");
  EXPECT_EQ((*run)["Run"]["Statistics"]["SucceededActions"], 2);
  for (const Json& node : (*run)["Run"]["Graph"]["Nodes"]) {
    if (node["Type"] == "CRAWLER") {
      EXPECT_EQ(node["CrawlerDetails"]["Crawls"][0]["State"], "SUCCEEDED");
    }
  }
}

// The background thread: woken by an operation, it carries out the fire; Stop joins it.
TEST_F(SchedulerTest, TheThreadCarriesOutFiresWhenWoken) {
  CreateJob("later");
  Ok(scheduler_->CreateTrigger(Json{{"Name", "now"}, {"Type", "ON_DEMAND"},
                                    {"Actions", {{{"JobName", "later"}}}}}));
  scheduler_->Start();
  Ok(scheduler_->StartTrigger(Json{{"Name", "now"}}));
  for (int i = 0; i < 500 && Runs("later").empty(); ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  EXPECT_EQ(Runs("later").size(), 1u);
  scheduler_->Stop();
  scheduler_->Stop();  // twice is harmless
}

TEST_F(SchedulerTest, CrawlerSchedulesFireOncePerDueMinuteAndStopWhenStopped) {
  auto catalog = catalog::Catalog::Make(store_.get(), &clock_, {});
  ASSERT_TRUE(catalog.ok());
  SeededRandom crawler_random(5);
  auto crawlers = crawler::CrawlerService::Make(store_.get(), catalog->get(), &clock_,
                                                &crawler_random, {});
  ASSERT_TRUE(crawlers.ok());
  Ok((*crawlers)->CreateCrawler(Json{{"Name", "nightly"}, {"Role", "local"},
                                     {"DatabaseName", "db"},
                                     {"Targets", {{"S3Targets", {{{"Path", "s3://lake/x/"}}}}}},
                                     {"Schedule", "cron(15 10 * * ? *)"}}));
  std::vector<std::string> started;
  SchedulerOptions options;
  options.start_crawler = [&started](const std::string& name) {
    started.push_back(name);
    return Status::OK();
  };
  MakeScheduler(options);
  scheduler_->RunOnce();
  EXPECT_TRUE(started.empty());  // 10:00:30: not due yet
  clock_.Set(kStart + 14 * 60000 + 30000);  // 10:15:00
  scheduler_->RunOnce();
  scheduler_->RunOnce();
  EXPECT_EQ(started, std::vector<std::string>{"nightly"});
  // A restart within the minute does not start it again.
  clock_.Advance(10000);
  MakeScheduler(options);
  scheduler_->RunOnce();
  EXPECT_EQ(started.size(), 1u);
  // The next day at 10:15 it fires again; after StopCrawlerSchedule it does not.
  clock_.Set(kStart + 1440 * 60000 + 14 * 60000 + 30000);
  scheduler_->RunOnce();
  EXPECT_EQ(started.size(), 2u);
  Ok((*crawlers)->StopCrawlerSchedule(Json{{"CrawlerName", "nightly"}}));
  scheduler_->CrawlerSchedulesChanged();
  clock_.Set(kStart + 2 * 1440 * 60000 + 14 * 60000 + 30000);
  scheduler_->RunOnce();
  EXPECT_EQ(started.size(), 2u);
  EXPECT_EQ((*crawlers)->StopCrawlerSchedule(Json{{"CrawlerName", "nightly"}}).status().code(),
            StatusCode::kSchedulerNotRunning);
  Ok((*crawlers)->StartCrawlerSchedule(Json{{"CrawlerName", "nightly"}}));
  EXPECT_EQ((*crawlers)->StartCrawlerSchedule(Json{{"CrawlerName", "nightly"}}).status().code(),
            StatusCode::kSchedulerRunning);
  EXPECT_EQ((*crawlers)->UpdateCrawlerSchedule(Json{{"CrawlerName", "nightly"},
                                                    {"Schedule", "cron(15 25 * * ? *)"}})
                .status()
                .code(),
            StatusCode::kInvalidInput);
}

// A condition on `job` ending SUCCEEDED.
Json OnSuccessOf(const std::string& job) {
  return Json{{"Conditions", {{{"LogicalOperator", "EQUALS"}, {"JobName", job}, {"State", "SUCCEEDED"}}}}};
}

// Every row of `kind`.
size_t Rows(store::MetadataStore* store, std::string_view kind) {
  auto txn = store->BeginRead();
  if (!txn.ok()) return 0;
  auto rows = (*txn)->Scan(kind, store::ScanOptions{});
  return rows.ok() ? rows->size() : 0;
}

// Outside workflows a chain of conditional fires starts each job once: A -> B -> A stops at B,
// also through a retry of B and through an AND that merges two chains; a new run by hand starts
// a new chain. Nothing of the lineages is left once the runs ended.
TEST_F(SchedulerTest, ACycleOutsideWorkflowsStartsEachJobOncePerChain) {
  for (const char* job : {"a", "c"}) CreateJob(job);
  Ok(jobs_->CreateJob(Json{{"Name", "b"}, {"Role", "local"}, {"MaxRetries", 1},
                           {"Command", {{"Name", "pythonshell"}, {"ScriptLocation", "s3://scripts/job.py"}}}}));
  Ok(scheduler_->CreateTrigger(Json{{"Name", "a-then-b"}, {"Type", "CONDITIONAL"}, {"StartOnCreation", true},
                                    {"Predicate", OnSuccessOf("a")}, {"Actions", {{{"JobName", "b"}}}}}));
  Ok(scheduler_->CreateTrigger(Json{{"Name", "b-then-a"}, {"Type", "CONDITIONAL"}, {"StartOnCreation", true},
                                    {"Predicate", OnSuccessOf("b")}, {"Actions", {{{"JobName", "a"}}}}}));
  Ok(jobs_->StartJobRun(Json{{"JobName", "a"}}));
  FinishRuns(0);
  ASSERT_EQ(Runs("b").size(), 1u);
  EXPECT_EQ(Rows(store_.get(), internal::kChain), 1u);
  FinishRuns(1);  // B fails with a retry left: the retry carries the lineage
  ASSERT_EQ(Runs("b").size(), 2u);
  FinishRuns(0);
  for (int i = 0; i < 3; ++i) FinishRuns(0);
  EXPECT_EQ(Runs("a").size(), 1u);
  EXPECT_EQ(Runs("b").size(), 2u);
  EXPECT_EQ(Rows(store_.get(), internal::kChain), 0u);

  // A new chain from a run by hand; its B starts no A either.
  Ok(jobs_->StartJobRun(Json{{"JobName", "a"}}));
  for (int i = 0; i < 4; ++i) FinishRuns(0);
  EXPECT_EQ(Runs("a").size(), 2u);
  EXPECT_EQ(Runs("b").size(), 3u);

  // AND over C and B: the fire's lineage is both runs'. C by hand, then A (by hand) -> B: B's
  // success completes the AND, whose action A is in B's lineage.
  Json both{{"Logical", "AND"},
            {"Conditions", {{{"LogicalOperator", "EQUALS"}, {"JobName", "c"}, {"State", "SUCCEEDED"}},
                            {{"LogicalOperator", "EQUALS"}, {"JobName", "b"}, {"State", "SUCCEEDED"}}}}};
  Ok(scheduler_->StopTrigger(Json{{"Name", "b-then-a"}}));
  Ok(scheduler_->CreateTrigger(Json{{"Name", "c-and-b-then-a"}, {"Type", "CONDITIONAL"},
                                    {"StartOnCreation", true}, {"Predicate", both},
                                    {"Actions", {{{"JobName", "a"}}}}}));
  Ok(jobs_->StartJobRun(Json{{"JobName", "c"}}));
  FinishRuns(0);
  Ok(jobs_->StartJobRun(Json{{"JobName", "a"}}));
  for (int i = 0; i < 4; ++i) FinishRuns(0);
  EXPECT_EQ(Runs("a").size(), 3u);
  EXPECT_EQ(Runs("b").size(), 4u);
  EXPECT_EQ(Rows(store_.get(), internal::kChain), 0u);
}

// In a workflow run each node runs once: A -> B -> A completes with one run of each.
TEST_F(SchedulerTest, ACycleInAWorkflowRunRunsEachNodeOnce) {
  for (const char* job : {"a", "b"}) CreateJob(job);
  Ok(scheduler_->CreateWorkflow(Json{{"Name", "wf"}}));
  Ok(scheduler_->CreateTrigger(Json{{"Name", "go"}, {"WorkflowName", "wf"}, {"Type", "ON_DEMAND"},
                                    {"Actions", {{{"JobName", "a"}}}}}));
  Ok(scheduler_->CreateTrigger(Json{{"Name", "a-then-b"}, {"WorkflowName", "wf"}, {"Type", "CONDITIONAL"},
                                    {"StartOnCreation", true}, {"Predicate", OnSuccessOf("a")},
                                    {"Actions", {{{"JobName", "b"}}}}}));
  Ok(scheduler_->CreateTrigger(Json{{"Name", "b-then-a"}, {"WorkflowName", "wf"}, {"Type", "CONDITIONAL"},
                                    {"StartOnCreation", true}, {"Predicate", OnSuccessOf("b")},
                                    {"Actions", {{{"JobName", "a"}}}}}));
  auto started = scheduler_->StartWorkflowRun(Json{{"Name", "wf"}});
  ASSERT_TRUE(started.ok()) << started.status().ToString();
  scheduler_->RunOnce();
  for (int i = 0; i < 4; ++i) FinishRuns(0);
  EXPECT_EQ(Runs("a").size(), 1u);
  EXPECT_EQ(Runs("b").size(), 1u);
  auto run = scheduler_->GetWorkflowRun(Json{{"Name", "wf"}, {"RunId", (*started)["RunId"]}});
  ASSERT_TRUE(run.ok());
  EXPECT_EQ((*run)["Run"]["Status"], "COMPLETED");
  EXPECT_EQ((*run)["Run"]["Statistics"]["TotalActions"], 2);
}

// WorkflowRunOfJobRun answers what the scheduler recorded: a workflow's run and its retry (before
// the retry ends) belong to the workflow run; a run by hand does not, whatever its arguments say,
// nor a StartJobRun that names the workflow's run as the one it retries.
TEST_F(SchedulerTest, WorkflowRunOfJobRunIsWhatTheSchedulerRecorded) {
  Ok(jobs_->CreateJob(Json{{"Name", "step"}, {"Role", "local"}, {"MaxRetries", 1},
                           {"ExecutionProperty", {{"MaxConcurrentRuns", 10}}},
                           {"Command", {{"Name", "pythonshell"}, {"ScriptLocation", "s3://scripts/job.py"}}}}));
  Ok(scheduler_->CreateWorkflow(Json{{"Name", "wf"}}));
  Ok(scheduler_->CreateTrigger(Json{{"Name", "go"}, {"WorkflowName", "wf"}, {"Type", "ON_DEMAND"},
                                    {"Actions", {{{"JobName", "step"}}}}}));
  auto started = scheduler_->StartWorkflowRun(Json{{"Name", "wf"}});
  ASSERT_TRUE(started.ok()) << started.status().ToString();
  std::string workflow_run = (*started)["RunId"];
  scheduler_->RunOnce();
  Json runs = Runs("step");
  ASSERT_EQ(runs.size(), 1u);
  std::string first = runs[0]["Id"];
  auto own = scheduler_->WorkflowRunOfJobRun("step", first);
  ASSERT_TRUE(own.ok() && own->has_value());
  EXPECT_EQ((*own)->workflow, "wf");
  EXPECT_EQ((*own)->run_id, workflow_run);
  jobs_->Tick();
  launcher_.ExitAll(1);
  jobs_->Tick();  // the retry is created; the scheduler has not seen it end
  runs = Runs("step");
  ASSERT_EQ(runs.size(), 2u);
  // Runs started in the same (fake) millisecond: find the retry by its attempt.
  std::string retry_id = runs[0]["Attempt"] == 1 ? runs[0]["Id"] : runs[1]["Id"];
  auto retry = scheduler_->WorkflowRunOfJobRun("step", retry_id);
  ASSERT_TRUE(retry.ok() && retry->has_value());
  EXPECT_EQ((*retry)->run_id, workflow_run);

  auto by_hand = jobs_->StartJobRun(Json{{"JobName", "step"},
                                         {"Arguments", {{"--WORKFLOW_NAME", "wf"},
                                                        {"--WORKFLOW_RUN_ID", workflow_run}}}});
  ASSERT_TRUE(by_hand.ok()) << by_hand.status().ToString();
  auto found = scheduler_->WorkflowRunOfJobRun("step", (*by_hand)["JobRunId"]);
  ASSERT_TRUE(found.ok());
  EXPECT_FALSE(found->has_value());
  auto claimed = jobs_->StartJobRun(Json{{"JobName", "step"}, {"JobRunId", first}});
  ASSERT_TRUE(claimed.ok()) << claimed.status().ToString();
  found = scheduler_->WorkflowRunOfJobRun("step", (*claimed)["JobRunId"]);
  ASSERT_TRUE(found.ok());
  EXPECT_FALSE(found->has_value());
  found = scheduler_->WorkflowRunOfJobRun("step", "jr_none");
  ASSERT_TRUE(found.ok());
  EXPECT_FALSE(found->has_value());
}

}  // namespace
}  // namespace openglue::schedule
