// Data-quality evaluation and recommendation runs over a real SQLite store, a real JobService
// and a fake process launcher (jobs/process_launcher_fake.h) with an injected clock: what Start
// refuses, what the process is given, the states a run goes through (STARTING, RUNNING,
// SUCCEEDED, STOPPING, STOPPED, TIMEOUT), results published by the run as its own, the
// recommendation stored as a ruleset, and a run whose process is gone after a restart.
#include <gtest/gtest.h>

#include <csignal>
#include <filesystem>
#include <fstream>
#include <set>

#include "jobs/job_service.h"
#include "jobs/process_launcher_fake.h"
#include "quality/quality_service.h"
#include "store/sqlite_store.h"

namespace openglue::quality {
namespace {

constexpr int64_t kStartMs = 1772323200000LL;  // 2026-03-01 00:00:00 UTC

Json Orders() { return {{"GlueTable", {{"DatabaseName", "sales"}, {"TableName", "orders"}}}}; }

class QualityRunsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char pattern[] = "/tmp/og-dq-runs-XXXXXX";
    dir_ = mkdtemp(pattern);
    std::filesystem::create_directories(dir_ + "/logs");
    auto store = store::SqliteStore::Make(dir_ + "/catalog.db");
    ASSERT_TRUE(store.ok());
    store_ = std::move(*store);
    logs_ = std::make_unique<jobs::FakeLogs>(dir_ + "/logs");
    MakeServices(&launcher_);
    ASSERT_TRUE(quality_->CreateDataQualityRuleset({{"Name", "good"}, {"Ruleset", "Rules = [ RowCount > 0 ]"}}).ok());
  }
  void TearDown() override {
    quality_.reset();
    jobs_.reset();
    std::filesystem::remove_all(dir_);
  }
  void MakeServices(jobs::FakeLauncher* launcher) {
    quality_.reset();
    jobs_.reset();
    jobs::JobServiceOptions options;
    options.data_dir = dir_;
    options.endpoint = "http://127.0.0.1:1";
    options.runtime_path = "/nonexistent/python";
    jobs::RunCredentials credentials{
        [this](const jobs::RunGrant& grant) {
          grants.push_back(grant);
          return std::string("secret");
        },
        [](const std::string&) {}};
    auto made = jobs::JobService::Make(store_.get(), &clock_, &random_, launcher, logs_.get(),
                                       credentials, options);
    ASSERT_TRUE(made.ok()) << made.status().ToString();
    jobs_ = std::move(*made);
    QualityOptions quality_options;
    quality_options.table_exists = [](const Json& table) -> Status {
      if (table.value("DatabaseName", "") == "sales" && table.value("TableName", "") == "orders")
        return Status::OK();
      return Status::EntityNotFound("Table " + table.value("TableName", "") + " not found.");
    };
    auto quality = QualityService::Make(store_.get(), &clock_, &random_, quality_options, jobs_.get());
    ASSERT_TRUE(quality.ok());
    quality_ = std::move(*quality);
  }
  std::string StartEvaluation(Json extra = Json::object()) {
    Json request{{"DataSource", Orders()}, {"Role", "dq-role"}, {"RulesetNames", {"good"}}};
    for (auto& [k, v] : extra.items()) request[k] = v;
    auto started = quality_->StartDataQualityRulesetEvaluationRun(request);
    EXPECT_TRUE(started.ok()) << started.status().ToString();
    return started.ok() ? (*started)["RunId"].get<std::string>() : "";
  }
  Json GetEvaluation(const std::string& id) {
    auto got = quality_->GetDataQualityRulesetEvaluationRun({{"RunId", id}});
    EXPECT_TRUE(got.ok()) << got.status().ToString();
    return got.ok() ? *got : Json::object();
  }
  Json PublishBody() {
    return {{"Score", 1.0}, {"StartedOn", 1772323200.0}, {"CompletedOn", 1772323201.0},
            {"RulesetName", "good"}, {"RuleResults", {{{"Name", "Rule_1"}, {"Result", "PASS"}}}}};
  }

  std::string dir_;
  FakeClock clock_{kStartMs};
  SeededRandom random_{7};
  jobs::FakeLauncher launcher_;
  std::unique_ptr<jobs::FakeLogs> logs_;
  std::unique_ptr<store::MetadataStore> store_;
  std::unique_ptr<jobs::JobService> jobs_;
  std::unique_ptr<QualityService> quality_;
  std::vector<jobs::RunGrant> grants;
};

TEST_F(QualityRunsTest, StartRefusesUnknownRulesetsAndTablesBeforeAnyRunExists) {
  auto unknown = quality_->StartDataQualityRulesetEvaluationRun(
      {{"DataSource", Orders()}, {"Role", "r"}, {"RulesetNames", {"good", "missing"}}});
  ASSERT_EQ(unknown.status().code(), StatusCode::kEntityNotFound);
  EXPECT_NE(unknown.status().message().find("missing"), std::string::npos);
  auto table = quality_->StartDataQualityRulesetEvaluationRun(
      {{"DataSource", {{"GlueTable", {{"DatabaseName", "sales"}, {"TableName", "nope"}}}}},
       {"Role", "r"}, {"RulesetNames", {"good"}}});
  EXPECT_EQ(table.status().code(), StatusCode::kEntityNotFound);
  auto twice = quality_->StartDataQualityRulesetEvaluationRun(
      {{"DataSource", Orders()}, {"Role", "r"}, {"RulesetNames", {"good", "good"}}});
  EXPECT_EQ(twice.status().code(), StatusCode::kInvalidInput);
  auto no_table = quality_->StartDataQualityRulesetEvaluationRun(
      {{"DataSource", Json::object()}, {"Role", "r"}, {"RulesetNames", {"good"}}});
  EXPECT_EQ(no_table.status().code(), StatusCode::kInvalidInput);
  auto rec = quality_->StartDataQualityRuleRecommendationRun(
      {{"DataSource", {{"GlueTable", {{"DatabaseName", "x"}, {"TableName", "y"}}}}}, {"Role", "r"}});
  EXPECT_EQ(rec.status().code(), StatusCode::kEntityNotFound);
  auto taken = quality_->StartDataQualityRuleRecommendationRun(
      {{"DataSource", Orders()}, {"Role", "r"}, {"CreatedRulesetName", "good"}});
  EXPECT_EQ(taken.status().code(), StatusCode::kAlreadyExists);
  jobs_->Tick();
  EXPECT_TRUE(launcher_.launched.empty());
  auto listed = quality_->ListDataQualityRulesetEvaluationRuns(Json::object());
  ASSERT_TRUE(listed.ok());
  EXPECT_TRUE((*listed)["Runs"].empty());
  EXPECT_EQ(quality_->GetDataQualityRulesetEvaluationRun({{"RunId", "dqrun-x"}}).status().code(),
            StatusCode::kEntityNotFound);
}

TEST_F(QualityRunsTest, AnEvaluationRunIsAModuleRunThatSucceeds) {
  std::string id = StartEvaluation({{"NumberOfWorkers", 3}, {"Timeout", 30}});
  ASSERT_EQ(id.rfind("dqrun-", 0), 0u) << id;
  EXPECT_EQ(id.size(), 6u + 40u);
  Json run = GetEvaluation(id);
  EXPECT_EQ(run["Status"], "STARTING");
  EXPECT_EQ(run["RulesetNames"], Json({"good"}));
  EXPECT_EQ(run["Timeout"], 30);
  EXPECT_EQ(run["NumberOfWorkers"], 3);
  EXPECT_EQ(run["Role"], "dq-role");
  EXPECT_EQ(run["ResultIds"], Json::array());

  jobs_->Tick();
  ASSERT_EQ(launcher_.launched.size(), 1u);
  EXPECT_EQ(GetEvaluation(id)["Status"], "RUNNING");
  const jobs::LaunchSpec& spec = launcher_.launched[0];
  // The process is the runtime module, on the embedded engine, with the run's own credential.
  std::ifstream argv_file(spec.argv.back());
  Json argv = Json::parse(argv_file);
  EXPECT_EQ(argv[0], std::string("module:") + kRunModule);
  std::ifstream spec_file(dir_ + "/runs/" + id + "/spec.json");
  Json module_spec = Json::parse(spec_file);
  EXPECT_EQ(module_spec["Kind"], "evaluation");
  EXPECT_EQ(module_spec["RunId"], id);
  EXPECT_EQ(module_spec["RulesetNames"], Json({"good"}));
  EXPECT_EQ(module_spec["DataSource"], Orders());
  std::set<std::string> env(spec.env.begin(), spec.env.end());
  EXPECT_TRUE(env.count("OPENGLUE_ENGINE=embedded"));
  ASSERT_EQ(grants.size(), 1u);
  EXPECT_EQ(grants[0].role, "dq-role");
  EXPECT_EQ(grants[0].job, kEvaluationOwner);
  EXPECT_EQ(grants[0].run_id, id);

  // The run publishes its result as its own: RulesetEvaluationRunId, listed in ResultIds.
  Publisher self{true, kEvaluationOwner, id};
  Json with_job = PublishBody();
  with_job["JobName"] = "other";
  EXPECT_EQ(quality_->PublishDataQualityResult(with_job, self).status().code(), StatusCode::kAccessDenied);
  Json foreign = PublishBody();
  foreign["RulesetEvaluationRunId"] = "dqrun-other";
  EXPECT_EQ(quality_->PublishDataQualityResult(foreign, self).status().code(), StatusCode::kAccessDenied);
  EXPECT_EQ(quality_->PublishDataQualityResult(foreign, Publisher{true, "some-job", "jr_1"}).status().code(),
            StatusCode::kAccessDenied);
  auto published = quality_->PublishDataQualityResult(PublishBody(), self);
  ASSERT_TRUE(published.ok()) << published.status().ToString();
  std::string result_id = (*published)["ResultId"];
  auto result = quality_->GetDataQualityResult({{"ResultId", result_id}});
  ASSERT_TRUE(result.ok());
  EXPECT_EQ((*result)["RulesetEvaluationRunId"], id);
  EXPECT_EQ((*result)["RulesetName"], "good");
  EXPECT_FALSE(result->contains("JobName"));
  EXPECT_EQ(GetEvaluation(id)["ResultIds"], Json({result_id}));

  clock_.Advance(5000);
  launcher_.Exit(1000, 0);
  jobs_->Tick();
  run = GetEvaluation(id);
  EXPECT_EQ(run["Status"], "SUCCEEDED");
  EXPECT_GE(run["CompletedOn"].get<double>(), run["StartedOn"].get<double>() + 5);
  EXPECT_EQ(run["ExecutionTime"], 5);
  auto cancel = quality_->CancelDataQualityRulesetEvaluationRun({{"RunId", id}});
  EXPECT_EQ(cancel.status().code(), StatusCode::kInvalidInput);
}

TEST_F(QualityRunsTest, CancelStopsAndListsFilterByTableAndTime) {
  std::string id = StartEvaluation();
  jobs_->Tick();
  ASSERT_EQ(GetEvaluation(id)["Status"], "RUNNING");
  ASSERT_TRUE(quality_->CancelDataQualityRulesetEvaluationRun({{"RunId", id}}).ok());
  EXPECT_EQ(GetEvaluation(id)["Status"], "STOPPING");
  ASSERT_FALSE(launcher_.signals.empty());
  EXPECT_EQ(launcher_.signals.back().second, SIGTERM);
  launcher_.processes[1000] = {jobs::ProcessState::kGone, -1};
  jobs_->Tick();
  EXPECT_EQ(GetEvaluation(id)["Status"], "STOPPED");
  EXPECT_EQ(quality_->CancelDataQualityRulesetEvaluationRun({{"RunId", "dqrun-nope"}}).status().code(),
            StatusCode::kEntityNotFound);

  clock_.Advance(10000);
  std::string second = StartEvaluation();
  auto all = quality_->ListDataQualityRulesetEvaluationRuns(Json::object());
  ASSERT_TRUE(all.ok());
  ASSERT_EQ((*all)["Runs"].size(), 2u);
  EXPECT_EQ((*all)["Runs"][0]["RunId"], second);  // newest first
  EXPECT_EQ((*all)["Runs"][0]["Status"], "STARTING");
  EXPECT_EQ((*all)["Runs"][1]["Status"], "STOPPED");
  auto after = quality_->ListDataQualityRulesetEvaluationRuns(
      {{"Filter", {{"DataSource", Orders()}, {"StartedAfter", (kStartMs + 5000) / 1000.0}}}});
  ASSERT_TRUE(after.ok());
  ASSERT_EQ((*after)["Runs"].size(), 1u);
  EXPECT_EQ((*after)["Runs"][0]["RunId"], second);
  Json other_table{{"GlueTable", {{"DatabaseName", "sales"}, {"TableName", "x"}}}};
  Json other_filter{{"DataSource", other_table}};
  auto other = quality_->ListDataQualityRulesetEvaluationRuns(Json{{"Filter", other_filter}});
  ASSERT_TRUE(other.ok());
  EXPECT_TRUE((*other)["Runs"].empty());
  auto page = quality_->ListDataQualityRulesetEvaluationRuns({{"MaxResults", 1}});
  ASSERT_TRUE(page.ok());
  EXPECT_EQ((*page)["Runs"].size(), 1u);
  EXPECT_TRUE(page->contains("NextToken"));
}

TEST_F(QualityRunsTest, TimeoutEndsTheRun) {
  std::string id = StartEvaluation({{"Timeout", 1}});
  jobs_->Tick();
  ASSERT_EQ(GetEvaluation(id)["Status"], "RUNNING");
  launcher_.die_on_sigterm = true;
  for (int i = 0; i < 5 && GetEvaluation(id)["Status"] != "TIMEOUT"; ++i) {
    clock_.Advance(61000);
    jobs_->Tick();
  }
  Json run = GetEvaluation(id);
  EXPECT_EQ(run["Status"], "TIMEOUT");
  EXPECT_NE(run["ErrorString"].get<std::string>().find("timed out"), std::string::npos);
}

TEST_F(QualityRunsTest, ARunWhoseProcessIsGoneAfterARestartEndsFailed) {
  std::string id = StartEvaluation();
  jobs_->Tick();
  ASSERT_EQ(GetEvaluation(id)["Status"], "RUNNING");
  jobs::FakeLauncher after_restart;  // knows no process: the run's is gone
  MakeServices(&after_restart);
  ASSERT_TRUE(jobs_->Recover().ok());
  jobs_->Tick();
  Json run = GetEvaluation(id);
  EXPECT_EQ(run["Status"], "FAILED");
  EXPECT_FALSE(run["ErrorString"].get<std::string>().empty());
}

TEST_F(QualityRunsTest, ARecommendationIsStoredAsTheCreatedRuleset) {
  auto started = quality_->StartDataQualityRuleRecommendationRun(
      {{"DataSource", Orders()}, {"Role", "r"}, {"CreatedRulesetName", "orders_rec"},
       {"ClientToken", "tok-1"}});
  ASSERT_TRUE(started.ok()) << started.status().ToString();
  std::string id = (*started)["RunId"];
  // The same ClientToken answers the same run.
  auto again = quality_->StartDataQualityRuleRecommendationRun(
      {{"DataSource", Orders()}, {"Role", "r"}, {"CreatedRulesetName", "orders_rec"},
       {"ClientToken", "tok-1"}});
  ASSERT_TRUE(again.ok());
  EXPECT_EQ((*again)["RunId"], id);
  jobs_->Tick();
  ASSERT_EQ(launcher_.launched.size(), 1u);

  const std::string text = "Rules = [\n  RowCount between 2 and 10,\n  IsComplete \"id\"\n]";
  Publisher self{true, kRecommendationOwner, id};
  EXPECT_EQ(quality_->PutDataQualityRecommendation({{"RecommendedRuleset", text}},
                                                   Publisher{true, kEvaluationOwner, id})
                .status().code(),
            StatusCode::kAccessDenied);
  EXPECT_EQ(quality_->PutDataQualityRecommendation({{"RecommendedRuleset", "Rules = ["}}, self).status().code(),
            StatusCode::kInvalidInput);
  EXPECT_EQ(quality_->PublishDataQualityResult(PublishBody(), self).status().code(), StatusCode::kAccessDenied);
  ASSERT_TRUE(quality_->PutDataQualityRecommendation({{"RecommendedRuleset", text}}, self).ok());
  auto run = quality_->GetDataQualityRuleRecommendationRun({{"RunId", id}});
  ASSERT_TRUE(run.ok());
  EXPECT_EQ((*run)["RecommendedRuleset"], text);
  EXPECT_EQ((*run)["CreatedRulesetName"], "orders_rec");
  EXPECT_EQ((*run)["Status"], "RUNNING");
  auto ruleset = quality_->GetDataQualityRuleset({{"Name", "orders_rec"}});
  ASSERT_TRUE(ruleset.ok());
  EXPECT_EQ((*ruleset)["Ruleset"], text);
  EXPECT_EQ((*ruleset)["RecommendationRunId"], id);
  EXPECT_EQ((*ruleset)["TargetTable"], Json({{"DatabaseName", "sales"}, {"TableName", "orders"}}));
  auto listed = quality_->ListDataQualityRulesets(Json::object());
  ASSERT_TRUE(listed.ok());
  bool found = false;
  for (const Json& item : (*listed)["Rulesets"])
    if (item["Name"] == "orders_rec") found = item["RuleCount"] == 2 && item["RecommendationRunId"] == id;
  EXPECT_TRUE(found) << listed->dump();
  // An administrator must name the run.
  EXPECT_EQ(quality_->PutDataQualityRecommendation({{"RecommendedRuleset", text}}, Publisher{}).status().code(),
            StatusCode::kInvalidInput);
  EXPECT_EQ(quality_->PutDataQualityRecommendation({{"RecommendedRuleset", text}, {"RunId", "dqrun-x"}},
                                                   Publisher{})
                .status().code(),
            StatusCode::kEntityNotFound);
}

}  // namespace
}  // namespace openglue::quality
