// JobService's state machine with an injected clock and a fake process launcher: runs succeed,
// fail, time out, are stopped, queue and retry, and survive a "server restart", without
// starting a process or sleeping.
#include "jobs/job_service.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <signal.h>

#include <filesystem>
#include <fstream>
#include <set>

#include "store/sqlite_store.h"

namespace openglue::jobs {
namespace {

class FakeLauncher : public ProcessLauncher {
 public:
  Result<int> Launch(const LaunchSpec& spec) override {
    if (fail_launch) return Status::InvalidInput("no such program");
    int pid = next_pid++;
    processes[pid] = {ProcessState::kRunning, -1};
    launched.push_back(spec);
    return pid;
  }
  Status SignalGroup(int pgid, int signal) override {
    signals.emplace_back(pgid, signal);
    if (signal == SIGKILL || (signal == SIGTERM && die_on_sigterm)) processes[pgid] = {ProcessState::kGone, -1};
    return Status::OK();
  }
  ProcessStatus Check(int pid, const std::string&) override {
    auto it = processes.find(pid);
    return it == processes.end() ? ProcessStatus{} : it->second;
  }
  void Exit(int pid, int code) { processes[pid] = {ProcessState::kExited, code}; }

  int next_pid = 1000;
  bool fail_launch = false;
  bool die_on_sigterm = false;
  std::map<int, ProcessStatus> processes;
  std::vector<LaunchSpec> launched;
  std::vector<std::pair<int, int>> signals;
};

class FakeLogs : public RunOutput {
 public:
  explicit FakeLogs(std::string root) : root_(std::move(root)) {}
  std::string StdoutPath(const std::string& id) override { return root_ + "/" + id + ".out"; }
  std::string StderrPath(const std::string& id) override { return root_ + "/" + id + ".err"; }
  void Follow(const std::string& id) override { followed.insert(id); }
  void Finish(const std::string& id) override { finished.insert(id); }
  std::set<std::string> followed, finished;

 private:
  std::string root_;
};

class JobServiceTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char pattern[] = "/tmp/og-jobs-XXXXXX";
    dir_ = mkdtemp(pattern);
    std::filesystem::create_directories(dir_ + "/logs");
    std::filesystem::create_directories(dir_ + "/s3/scripts");
    std::ofstream(dir_ + "/s3/scripts/job.py") << "print('hello')\n";
    auto store = store::SqliteStore::Make(dir_ + "/catalog.db");
    ASSERT_TRUE(store.ok());
    store_ = std::move(*store);
    logs_ = std::make_unique<FakeLogs>(dir_ + "/logs");
    MakeService();
  }
  void TearDown() override {
    service_.reset();
    std::filesystem::remove_all(dir_);
  }
  void MakeService(int max_concurrent = 16) {
    JobServiceOptions options;
    options.data_dir = dir_;
    options.endpoint = "http://127.0.0.1:1";
    options.max_concurrent_runs = max_concurrent;
    RunCredentials credentials{
        [this](const RunGrant& grant) {
          granted.insert(grant.access_key_id);
          return std::string("secret-of-") + grant.access_key_id;
        },
        [this](const std::string& id) { granted.erase(id); }};
    auto made = JobService::Make(store_.get(), &clock_, &launcher_, logs_.get(), credentials, options);
    ASSERT_TRUE(made.ok()) << made.status().ToString();
    service_ = std::move(*made);
  }
  void CreateJob(const std::string& name, Json extra = Json::object()) {
    Json request{{"Name", name}, {"Role", "local"},
                 {"Command", {{"Name", "glueetl"}, {"ScriptLocation", "s3://scripts/job.py"}}}};
    for (auto& [k, v] : extra.items()) request[k] = v;
    auto created = service_->CreateJob(request);
    ASSERT_TRUE(created.ok()) << created.status().ToString();
  }
  std::string Start(const std::string& job, Json extra = Json::object()) {
    Json request{{"JobName", job}};
    for (auto& [k, v] : extra.items()) request[k] = v;
    auto started = service_->StartJobRun(request);
    EXPECT_TRUE(started.ok()) << started.status().ToString();
    return started.ok() ? (*started)["JobRunId"].get<std::string>() : "";
  }
  Json Run(const std::string& job, const std::string& id) {
    auto run = service_->GetJobRun(Json{{"JobName", job}, {"RunId", id}});
    EXPECT_TRUE(run.ok()) << run.status().ToString();
    return run.ok() ? (*run)["JobRun"] : Json();
  }
  std::string State(const std::string& job, const std::string& id) {
    return Run(job, id)["JobRunState"];
  }

  std::string dir_;
  FakeClock clock_{1700000000000};
  FakeLauncher launcher_;
  std::unique_ptr<store::SqliteStore> store_;
  std::unique_ptr<FakeLogs> logs_;
  std::unique_ptr<JobService> service_;
  std::set<std::string> granted;
};

TEST_F(JobServiceTest, RunSucceedsWithMergedArgumentsAndACallbackCredential) {
  CreateJob("etl", {{"DefaultArguments", {{"--day", "1"}, {"--env", "dev"}}},
                    {"NonOverridableArguments", {{"--env", "prod"}}}});
  std::string id = Start("etl", {{"Arguments", {{"--day", "2"}, {"--env", "test"}}}});
  EXPECT_EQ(State("etl", id), "STARTING");
  service_->Tick();
  EXPECT_EQ(State("etl", id), "RUNNING");
  ASSERT_EQ(launcher_.launched.size(), 1u);
  const auto& argv = launcher_.launched[0].argv;
  auto value_of = [&](const std::string& flag) {
    for (size_t i = 0; i + 1 < argv.size(); ++i)
      if (argv[i] == flag) return argv[i + 1];
    return std::string("<absent>");
  };
  // The script runs from a copy read out of the store into the run's own folder.
  EXPECT_EQ(argv[2], dir_ + "/runs/" + id + "/script/job.py");
  std::ifstream copy(argv[2]);
  std::string text((std::istreambuf_iterator<char>(copy)), std::istreambuf_iterator<char>());
  EXPECT_EQ(text, "print('hello')\n");
  EXPECT_EQ(launcher_.launched[0].run_dir, dir_ + "/runs/" + id);
  // The secret the grant returned reaches the run through its environment only.
  ASSERT_EQ(granted.size(), 1u);
  const auto& env = launcher_.launched[0].env;
  EXPECT_NE(std::find(env.begin(), env.end(), "AWS_SECRET_ACCESS_KEY=secret-of-" + *granted.begin()),
            env.end());
  for (const std::string& arg : argv) EXPECT_EQ(arg.find("secret-of-"), std::string::npos);
  EXPECT_EQ(value_of("--JOB_NAME"), "etl");
  EXPECT_EQ(value_of("--JOB_RUN_ID"), id);
  EXPECT_EQ(value_of("--day"), "2");     // the run's argument overrides the default
  EXPECT_EQ(value_of("--env"), "prod");  // non-overridable wins over both
  EXPECT_EQ(granted.size(), 1u);

  clock_.Advance(3500);
  launcher_.Exit(1000, 0);
  service_->Tick();
  Json run = Run("etl", id);
  EXPECT_EQ(run["JobRunState"], "SUCCEEDED");
  EXPECT_EQ(run["ExecutionTime"], 4);
  EXPECT_TRUE(run.contains("CompletedOn"));
  EXPECT_FALSE(run.contains("_og"));
  EXPECT_TRUE(granted.empty());  // the run's credential is revoked when it ends
  EXPECT_EQ(logs_->finished.count(id), 1u);
}

TEST_F(JobServiceTest, FailedRunCarriesThePythonExceptionInErrorMessage) {
  CreateJob("etl");
  std::string id = Start("etl");
  service_->Tick();
  std::ofstream(logs_->StderrPath(id))
      << "Traceback (most recent call last):\n  File \"job.py\", line 1, in <module>\n"
         "    raise ValueError('bad row 7')\nValueError: bad row 7\n";
  launcher_.Exit(1000, 1);
  service_->Tick();
  Json run = Run("etl", id);
  EXPECT_EQ(run["JobRunState"], "FAILED");
  EXPECT_EQ(run["ErrorMessage"], "ValueError: bad row 7");
}

TEST_F(JobServiceTest, TimeoutKillsTheProcessGroupAndIsNotRetried) {
  CreateJob("slow", {{"Timeout", 2}, {"MaxRetries", 3}});
  std::string id = Start("slow");
  service_->Tick();
  clock_.Advance(119000);
  service_->Tick();
  EXPECT_EQ(State("slow", id), "RUNNING");
  clock_.Advance(2000);
  service_->Tick();  // kills
  service_->Tick();  // notices it is gone
  Json run = Run("slow", id);
  EXPECT_EQ(run["JobRunState"], "TIMEOUT");
  EXPECT_NE(run["ErrorMessage"].get<std::string>().find("timed out after 2 minutes"), std::string::npos);
  ASSERT_FALSE(launcher_.signals.empty());
  EXPECT_EQ(launcher_.signals[0], std::make_pair(1000, SIGKILL));
  auto runs = service_->GetJobRuns(Json{{"JobName", "slow"}});
  ASSERT_TRUE(runs.ok());
  EXPECT_EQ((*runs)["JobRuns"].size(), 1u);  // no retry after a timeout
}

TEST_F(JobServiceTest, RunTimeoutOverridesTheJobs) {
  CreateJob("slow", {{"Timeout", 60}});
  std::string id = Start("slow", {{"Timeout", 1}});
  service_->Tick();
  clock_.Advance(61000);
  service_->Tick();
  service_->Tick();
  EXPECT_EQ(State("slow", id), "TIMEOUT");
}

TEST_F(JobServiceTest, ConcurrentRunsExceededWithoutQueuing) {
  CreateJob("one");
  Start("one");
  auto second = service_->StartJobRun(Json{{"JobName", "one"}});
  ASSERT_FALSE(second.ok());
  EXPECT_EQ(second.status().code(), StatusCode::kConcurrentRunsExceeded);
}

TEST_F(JobServiceTest, QueuedRunWaitsThenStartsWhenTheSlotFrees) {
  CreateJob("one", {{"JobRunQueuingEnabled", true}});
  std::string first = Start("one");
  std::string second = Start("one");
  service_->Tick();
  EXPECT_EQ(State("one", first), "RUNNING");
  EXPECT_EQ(State("one", second), "WAITING");
  launcher_.Exit(1000, 0);
  service_->Tick();  // first finishes
  service_->Tick();  // second moves on
  service_->Tick();
  EXPECT_EQ(State("one", first), "SUCCEEDED");
  EXPECT_EQ(State("one", second), "RUNNING");
  EXPECT_EQ(launcher_.launched.size(), 2u);
}

TEST_F(JobServiceTest, ServerWideLimitQueuesRunsOfOtherJobs) {
  MakeService(/*max_concurrent=*/1);
  CreateJob("a");
  CreateJob("b");
  std::string a = Start("a");
  std::string b = Start("b");
  service_->Tick();
  EXPECT_EQ(State("a", a), "RUNNING");
  EXPECT_EQ(State("b", b), "WAITING");
  launcher_.Exit(1000, 0);
  for (int i = 0; i < 3; ++i) service_->Tick();
  EXPECT_EQ(State("b", b), "RUNNING");
}

TEST_F(JobServiceTest, FailedRunsAreRetriedWithAttemptAndPreviousRunId) {
  CreateJob("flaky", {{"MaxRetries", 2}});
  std::string first = Start("flaky");
  for (int attempt = 0; attempt < 3; ++attempt) {
    service_->Tick();
    launcher_.Exit(1000 + attempt, 1);
    service_->Tick();
  }
  auto runs = service_->GetJobRuns(Json{{"JobName", "flaky"}});
  ASSERT_TRUE(runs.ok());
  const Json& list = (*runs)["JobRuns"];
  ASSERT_EQ(list.size(), 3u);  // newest first
  EXPECT_EQ(list[0]["Attempt"], 2);
  EXPECT_EQ(list[1]["Attempt"], 1);
  EXPECT_EQ(list[2]["Id"], first);
  EXPECT_EQ(list[0]["PreviousRunId"], list[1]["Id"]);
  EXPECT_EQ(list[1]["PreviousRunId"], first);
  for (const Json& r : list) EXPECT_EQ(r["JobRunState"], "FAILED");
}

TEST_F(JobServiceTest, StopSendsSigtermThenSigkillAfterTheGrace) {
  CreateJob("etl");
  std::string id = Start("etl");
  service_->Tick();
  auto stopped = service_->BatchStopJobRun(Json{{"JobName", "etl"}, {"JobRunIds", {id, "jr_nope"}}});
  ASSERT_TRUE(stopped.ok());
  EXPECT_EQ((*stopped)["SuccessfulSubmissions"].size(), 1u);
  EXPECT_EQ((*stopped)["Errors"].size(), 1u);
  EXPECT_EQ(State("etl", id), "STOPPING");
  EXPECT_EQ(launcher_.signals.back(), std::make_pair(1000, SIGTERM));
  service_->Tick();
  EXPECT_EQ(State("etl", id), "STOPPING");  // ignores SIGTERM
  clock_.Advance(10000);
  service_->Tick();
  EXPECT_EQ(launcher_.signals.back(), std::make_pair(1000, SIGKILL));
  service_->Tick();
  EXPECT_EQ(State("etl", id), "STOPPED");
}

TEST_F(JobServiceTest, RestartReadoptsLiveRunsAndFinishesLostOnes) {
  CreateJob("a", {{"ExecutionProperty", {{"MaxConcurrentRuns", 3}}}});
  std::string alive = Start("a");
  std::string lost = Start("a");
  service_->Tick();
  launcher_.processes[1001] = {ProcessState::kGone, -1};  // died while the server was down
  service_.reset();                                        // the server stops
  MakeService();
  ASSERT_TRUE(service_->Recover().ok());
  EXPECT_EQ(State("a", alive), "RUNNING");
  Json lost_run = Run("a", lost);
  EXPECT_EQ(lost_run["JobRunState"], "FAILED");
  EXPECT_NE(lost_run["ErrorMessage"].get<std::string>().find("server restarted"), std::string::npos);
  launcher_.Exit(1000, 0);
  service_->Tick();
  EXPECT_EQ(State("a", alive), "SUCCEEDED");
  // Run ids stay unique and ordered after the restart.
  std::string next = Start("a");
  auto runs = service_->GetJobRuns(Json{{"JobName", "a"}});
  ASSERT_TRUE(runs.ok());
  EXPECT_EQ((*runs)["JobRuns"][0]["Id"], next);
}

TEST_F(JobServiceTest, MissingScriptFailsTheRunWithAClearMessage) {
  CreateJob("etl", {{"Command", {{"Name", "pythonshell"}, {"ScriptLocation", "s3://scripts/none.py"}}}});
  std::string id = Start("etl");
  service_->Tick();
  Json run = Run("etl", id);
  EXPECT_EQ(run["JobRunState"], "FAILED");
  EXPECT_NE(run["ErrorMessage"].get<std::string>().find("s3://scripts/none.py not found"), std::string::npos);
}

TEST_F(JobServiceTest, ScriptPathsThatLeaveTheStoreFailTheRunAndAreNeverLaunched) {
  std::filesystem::create_directories(dir_ + "/outside");
  std::ofstream(dir_ + "/outside/evil.py") << "print('evil')\n";
  std::filesystem::create_symlink(dir_ + "/outside/evil.py", dir_ + "/s3/scripts/link.py");
  int n = 0;
  for (const std::string& location : std::vector<std::string>{"s3://../outside/evil.py", "s3://scripts/../../outside/evil.py", "s3://scripts/link.py",
        "s3a://scripts/../../outside/evil.py", "s3://scripts/" + dir_ + "/outside/evil.py"}) {
    std::string job = "evil" + std::to_string(++n);
    CreateJob(job, {{"Command", {{"Name", "pythonshell"}, {"ScriptLocation", location}}}});
    std::string id = Start(job);
    service_->Tick();
    Json run = Run(job, id);
    EXPECT_EQ(run["JobRunState"], "FAILED") << location;
    EXPECT_NE(run["ErrorMessage"].get<std::string>().find(location), std::string::npos)
        << run["ErrorMessage"];
  }
  EXPECT_TRUE(launcher_.launched.empty());
}

TEST_F(JobServiceTest, ARunThatCannotBeStartedEndsInError) {
  CreateJob("etl", {{"MaxRetries", 2}});
  launcher_.fail_launch = true;
  std::string id = Start("etl");
  service_->Tick();
  Json run = Run("etl", id);
  EXPECT_EQ(run["JobRunState"], "ERROR");
  EXPECT_NE(run["ErrorMessage"].get<std::string>().find("no such program"), std::string::npos);
  auto runs = service_->GetJobRuns(Json{{"JobName", "etl"}});
  ASSERT_TRUE(runs.ok());
  EXPECT_EQ((*runs)["JobRuns"].size(), 1u);  // not retried
  EXPECT_TRUE(granted.empty());
}

TEST_F(JobServiceTest, UnsupportedCommandIsInvalidInputNamingTheSupportedOnes) {
  auto created = service_->CreateJob(
      Json{{"Name", "stream"}, {"Role", "r"},
           {"Command", {{"Name", "gluestreaming"}, {"ScriptLocation", "s3://scripts/job.py"}}}});
  ASSERT_FALSE(created.ok());
  EXPECT_EQ(created.status().code(), StatusCode::kInvalidInput);
  EXPECT_NE(created.status().message().find("glueetl and pythonshell"), std::string::npos);
}

TEST_F(JobServiceTest, DeletedJobKeepsItsRunHistory) {
  CreateJob("etl");
  std::string id = Start("etl");
  service_->Tick();
  launcher_.Exit(1000, 0);
  service_->Tick();
  ASSERT_TRUE(service_->DeleteJob(Json{{"JobName", "etl"}}).ok());
  EXPECT_EQ(State("etl", id), "SUCCEEDED");
  auto job = service_->GetJob(Json{{"JobName", "etl"}});
  EXPECT_EQ(job.status().code(), StatusCode::kEntityNotFound);
}

}  // namespace
}  // namespace openglue::jobs
