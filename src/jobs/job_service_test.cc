// JobService's state machine with an injected clock and a fake process launcher: runs succeed,
// fail, time out, are stopped, queue and retry, and survive a "server restart", without
// starting a process or sleeping.
#include "jobs/job_service.h"

#include <sys/stat.h>
#include "common/strings.h"
#include "jobs/process_launcher_fake.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <signal.h>

#include <condition_variable>
#include <filesystem>
#include <fstream>
#include <future>
#include <mutex>
#include <set>
#include <stdexcept>
#include <thread>

#include "common/strings.h"
#include "store/sqlite_store.h"

namespace openglue::jobs {
namespace {

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
    options.on_delete_job = on_delete_job_;
    options.data_dir = dir_;
    options.endpoint = "http://127.0.0.1:1";
    options.max_concurrent_runs = max_concurrent;
    options.runtime_path = runtime_path_;
    options.spark_master = spark_master_;
    RunCredentials credentials{
        [this](const RunGrant& grant) {
          granted.insert(grant.access_key_id);
          return std::string("secret-of-") + grant.access_key_id;
        },
        [this](const std::string& id) { granted.erase(id); }};
    auto made = JobService::Make(store_.get(), &clock_, &random_, &launcher_, logs_.get(),
                                 credentials, options);
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
  std::function<Status(store::Transaction*, const std::string&)> on_delete_job_;
  // Overwrites the stored document of run `id` with `text` (a damaged row).
  void Corrupt(const std::string& id, const std::string& text) {
    auto txn = store_->BeginWrite();
    ASSERT_TRUE(txn.ok());
    auto key = (*txn)->Get("job_run_id", id);
    ASSERT_TRUE(key.ok() && key->has_value());
    ASSERT_TRUE((*txn)->Put("job_run", **key, text).ok());
    ASSERT_TRUE((*txn)->Commit().ok());
  }
  // The stored document of run `id`, internal members included.
  Json ReadStored(const std::string& id) {
    auto txn = store_->BeginRead();
    EXPECT_TRUE(txn.ok());
    auto key = (*txn)->Get("job_run_id", id);
    auto doc = (*txn)->Get("job_run", **key);
    return Json::parse(**doc);
  }

  std::string dir_;
  std::string runtime_path_;
  std::string spark_master_;
  FakeClock clock_{1700000000000};
  SeededRandom random_{42};
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
  // The command line names only a file of the run's own; it holds sys.argv (script, arguments).
  const auto& command = launcher_.launched[0].argv;
  ASSERT_EQ(command.size(), 5u);
  EXPECT_EQ(command[2], "-c");
  EXPECT_EQ(command[4], dir_ + "/runs/" + id + "/argv.json");
  struct stat st;
  ASSERT_EQ(stat(command[4].c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0600u);
  std::ifstream argv_file(command[4]);
  Json listed = ParseJson(std::string((std::istreambuf_iterator<char>(argv_file)), std::istreambuf_iterator<char>()));
  std::vector<std::string> argv = {command[0], command[1]};
  for (const Json& a : listed) argv.push_back(a.get<std::string>());
  for (const std::string& arg : command) EXPECT_EQ(arg.find("--day"), std::string::npos);
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

// A Spark run prints the engine's lines after the traceback (its shutdown hook): the run's
// ErrorMessage is still the script's exception, and of a chained exception the last one.
TEST_F(JobServiceTest, ErrorMessageIsTheExceptionEvenWhenLinesFollowTheTraceback) {
  CreateJob("etl");
  std::string id = Start("etl");
  service_->Tick();
  std::ofstream(logs_->StderrPath(id))
      << "[openglue] engine: spark (--engine spark)\n"
         "Traceback (most recent call last):\n  File \"job.py\", line 3, in <module>\n"
         "    int('x')\nValueError: invalid literal for int() with base 10: 'x'\n\n"
         "During handling of the above exception, another exception occurred:\n\n"
         "Traceback (most recent call last):\n  File \"job.py\", line 5, in <module>\n"
         "    raise KeyError('day')\n    ^^^^^^^^^^^^^^^^^^^^^\nKeyError: 'day'\n"
         "[openglue] spark: master local[2], application app-1, UI http://127.0.0.1:4040\n";
  launcher_.Exit(1000, 1);
  service_->Tick();
  EXPECT_EQ(Run("etl", id)["ErrorMessage"], "KeyError: 'day'");
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

// --engine: auto (the default), embedded and spark start the run with OpenGlue's pyspark
// package on the path and the engine in OPENGLUE_ENGINE (auto is decided by the run itself);
// unknown values fail the run before anything starts; pythonshell runs get the same
// environment without an engine. Spark's environment: master (run argument, else the server's
// spark_master, else local[*]), run folder, worker type and count.
TEST_F(JobServiceTest, EngineArgumentChoosesTheEngineOrFailsTheRunBeforeItStarts) {
  runtime_path_ = dir_ + "/runtime";
  std::filesystem::create_directories(runtime_path_ + "/shims/pyspark");
  std::ofstream(runtime_path_ + "/shims/pyspark/__init__.py") << "\n";
  MakeService();
  auto env_of = [&](size_t i, const std::string& name) {
    for (const std::string& entry : launcher_.launched.at(i).env)
      if (entry.rfind(name + "=", 0) == 0) return entry.substr(name.size() + 1);
    return std::string("<absent>");
  };
  CreateJob("etl");
  Start("etl");
  service_->Tick();
  ASSERT_EQ(launcher_.launched.size(), 1u);
  EXPECT_EQ(env_of(0, "OPENGLUE_ENGINE"), "auto");
  EXPECT_EQ(env_of(0, "OPENGLUE_ENGINE_REASON"), "--engine not set, auto");
  EXPECT_EQ(env_of(0, "PYTHONPATH"), runtime_path_ + ":" + runtime_path_ + "/shims");
  EXPECT_EQ(env_of(0, "OPENGLUE_SPARK_MASTER"), "local[*]");
  EXPECT_EQ(env_of(0, "OPENGLUE_RUN_DIR"), launcher_.launched.at(0).run_dir);
  EXPECT_EQ(env_of(0, "OPENGLUE_WORKER_TYPE"), "<absent>");

  CreateJob("shell", {{"Command", {{"Name", "pythonshell"}, {"ScriptLocation", "s3://scripts/job.py"}}},
                      {"DefaultArguments", {{"--engine", "spark"}}}});
  Start("shell");
  service_->Tick();
  ASSERT_EQ(launcher_.launched.size(), 2u);
  EXPECT_EQ(env_of(1, "OPENGLUE_ENGINE"), "pythonshell");
  EXPECT_EQ(env_of(1, "PYTHONPATH"), runtime_path_);
  EXPECT_EQ(env_of(1, "OPENGLUE_SPARK_MASTER"), "<absent>");

  CreateJob("spark", {{"DefaultArguments", {{"--engine", "spark"}}},
                      {"WorkerType", "G.2X"}, {"NumberOfWorkers", 3},
                      {"ExecutionProperty", {{"MaxConcurrentRuns", 3}}}});
  std::string spark = Start("spark", {{"Arguments", {{"--spark-master", "spark://10.0.0.1:7077"}}}});
  std::string bad = Start("spark", {{"Arguments", {{"--engine", "fast\xff"}}}});
  std::string chosen = Start("spark", {{"Arguments", {{"--engine", " Embedded "}}}});
  for (int i = 0; i < 3; ++i) service_->Tick();
  EXPECT_EQ(State("spark", spark), "RUNNING");
  EXPECT_EQ(State("spark", bad), "FAILED");
  std::string message = Run("spark", bad)["ErrorMessage"];
  EXPECT_TRUE(IsValidUtf8(message));
  EXPECT_NE(message.find("' is not an engine: use auto, embedded or spark"), std::string::npos);
  EXPECT_EQ(State("spark", chosen), "RUNNING");
  ASSERT_EQ(launcher_.launched.size(), 4u);  // the bad one never started
  EXPECT_EQ(env_of(2, "OPENGLUE_ENGINE"), "spark");
  EXPECT_EQ(env_of(2, "OPENGLUE_ENGINE_REASON"), "--engine spark");
  EXPECT_EQ(env_of(2, "PYTHONPATH"), runtime_path_ + ":" + runtime_path_ + "/shims");
  EXPECT_EQ(env_of(2, "OPENGLUE_SPARK_MASTER"), "spark://10.0.0.1:7077");
  EXPECT_EQ(env_of(2, "OPENGLUE_WORKER_TYPE"), "G.2X");
  EXPECT_EQ(env_of(2, "OPENGLUE_NUMBER_OF_WORKERS"), "3");
  EXPECT_EQ(env_of(3, "OPENGLUE_ENGINE"), "embedded");
  EXPECT_EQ(env_of(3, "OPENGLUE_ENGINE_REASON"), "--engine embedded");
  EXPECT_EQ(env_of(3, "OPENGLUE_SPARK_MASTER"), "local[*]");
}

// The server's spark_master is the default of runs that do not name one.
TEST_F(JobServiceTest, TheServersSparkMasterIsTheDefault) {
  spark_master_ = "spark://master:7077";
  MakeService();
  CreateJob("etl", {{"DefaultArguments", {{"--engine", "spark"}}}});
  Start("etl");
  service_->Tick();
  ASSERT_EQ(launcher_.launched.size(), 1u);
  const auto& env = launcher_.launched.at(0).env;
  EXPECT_NE(std::find(env.begin(), env.end(), "OPENGLUE_SPARK_MASTER=spark://master:7077"), env.end());
}

TEST_F(JobServiceTest, AnyCommandNameIsAcceptedAndItsRunFailsAsGlueSays) {
  for (const char* name : {"gluestreaming", "glueray", "Glueetl"}) {
    std::string job = std::string("job_") + name;
    CreateJob(job, {{"Command", {{"Name", name}, {"ScriptLocation", "s3://scripts/job.py"}}}});
    auto got = service_->GetJob(Json{{"JobName", job}});
    ASSERT_TRUE(got.ok());
    EXPECT_EQ((*got)["Job"]["Command"]["Name"], name);
    std::string id = Start(job);
    service_->Tick();
    Json run = Run(job, id);
    EXPECT_EQ(run["JobRunState"], "FAILED");
    EXPECT_EQ(run["ErrorMessage"], "Could not find command for the given criteria");
  }
  EXPECT_TRUE(launcher_.launched.empty());  // nothing was started for them
  EXPECT_TRUE(granted.empty());
}

// Defect #1 of issue 6: a script's stderr is not valid UTF-8, or its exception line is cut in the
// middle of a character. The run ends FAILED with a valid UTF-8 message, the line cut at 2,048
// bytes on a character boundary.
TEST_F(JobServiceTest, StderrWithInvalidOrCutUtf8GivesAValidErrorMessage) {
  CreateJob("etl", {{"ExecutionProperty", {{"MaxConcurrentRuns", 2}}}});
  std::string bad = Start("etl");
  std::string long_line = Start("etl");
  service_->Tick();
  std::ofstream(logs_->StderrPath(bad)) << "\xff\n";
  std::string e_acute = "\xc3\xa9";
  std::string message = "ValueError: x";
  for (int i = 0; i < 1500; ++i) message += e_acute;
  std::ofstream(logs_->StderrPath(long_line))
      << "Traceback (most recent call last):\n  File \"job.py\", line 1, in <module>\n"
      << message << "\n";
  launcher_.Exit(1000, 3);
  launcher_.Exit(1001, 1);
  service_->Tick();

  Json first = Run("etl", bad);
  EXPECT_EQ(first["JobRunState"], "FAILED");
  std::string text = first["ErrorMessage"];
  EXPECT_TRUE(IsValidUtf8(text));
  EXPECT_EQ(text, "\xef\xbf\xbd");  // U+FFFD for the lone 0xff

  Json second = Run("etl", long_line);
  EXPECT_EQ(second["JobRunState"], "FAILED");
  text = second["ErrorMessage"];
  EXPECT_TRUE(IsValidUtf8(text));
  EXPECT_LE(text.size(), 2048u);
  EXPECT_GE(text.size(), 2047u);
  EXPECT_EQ(text.find("\xef\xbf\xbd"), std::string::npos);  // cut between characters, not in one
  EXPECT_EQ(text, message.substr(0, text.size()));
}

// The stored document of an active run is damaged (not JSON): the run ends in ERROR with a
// message instead of the ticker throwing, and the other runs go on.
TEST_F(JobServiceTest, ADamagedRunRecordEndsThatRunInErrorOnTheTicker) {
  CreateJob("etl", {{"ExecutionProperty", {{"MaxConcurrentRuns", 3}}}});
  std::string running = Start("etl");
  service_->Tick();
  std::string starting = Start("etl");
  std::string healthy = Start("etl");
  Corrupt(running, "{\"Id\": \"jr_");
  Corrupt(starting, "\xff\xfe not json");
  launcher_.Exit(1000, 0);
  service_->Tick();
  for (const std::string& id : {running, starting}) {
    Json run = ReadStored(id);
    EXPECT_EQ(run["JobRunState"], "ERROR") << id;
    EXPECT_NE(run["ErrorMessage"].get<std::string>().find("could not be read"), std::string::npos);
    EXPECT_EQ(run["Id"], id);
    EXPECT_EQ(run["JobName"], "etl");
  }
  EXPECT_EQ(State("etl", healthy), "RUNNING");
  EXPECT_TRUE(granted.size() == 1u);  // only the healthy run's credential is left
}

// The same at a restart: Recover reports the damaged row on its run and starts.
TEST_F(JobServiceTest, ADamagedRunRecordIsReportedOnItsRunAtRestart) {
  CreateJob("etl", {{"ExecutionProperty", {{"MaxConcurrentRuns", 4}}}});
  std::string garbage = Start("etl");
  std::string wrong_types = Start("etl");
  std::string unknown_state = Start("etl");
  std::string fine = Start("etl");
  service_->Tick();
  Corrupt(garbage, "]]]");
  Corrupt(wrong_types, Json{{"Id", wrong_types}, {"JobName", "etl"}, {"JobRunState", "RUNNING"},
                            {"Timeout", "soon"}, {"Attempt", "x"}, {"_og", {{"pid", "1001"}}}}.dump());
  Corrupt(unknown_state, Json{{"Id", unknown_state}, {"JobName", "etl"}, {"JobRunState", "DANCING"}}.dump());
  service_.reset();
  MakeService();
  ASSERT_TRUE(service_->Recover().ok());
  Json run = Run("etl", garbage);
  EXPECT_EQ(run["JobRunState"], "ERROR");
  EXPECT_NE(run["ErrorMessage"].get<std::string>().find("could not be read at server start"),
            std::string::npos);
  EXPECT_EQ(State("etl", unknown_state), "ERROR");
  // Parseable but of the wrong types: read with fallbacks; its process (pid "1001" is no pid)
  // is not found, so it ends as a run lost at the restart, without a crash.
  EXPECT_EQ(State("etl", wrong_types), "FAILED");
  EXPECT_EQ(State("etl", fine), "RUNNING");
  service_->Tick();
  EXPECT_EQ(State("etl", fine), "RUNNING");
}

class ThrowingLauncher : public FakeLauncher {
 public:
  ProcessStatus Check(int pid, const std::string& path) override {
    if (pid == throw_for) throw std::runtime_error("check failed \xff");
    return FakeLauncher::Check(pid, path);
  }
  int throw_for = -1;
};

// Nothing thrown while supervising one run ends the ticker (the server): that run is ended
// FAILED with a message, the others go on.
TEST_F(JobServiceTest, AnExceptionWhileSupervisingARunFailsThatRunOnly) {
  ThrowingLauncher launcher;
  JobServiceOptions options;
  options.data_dir = dir_;
  auto made = JobService::Make(store_.get(), &clock_, &random_, &launcher, logs_.get(),
                               RunCredentials{}, options);
  ASSERT_TRUE(made.ok());
  service_ = std::move(*made);
  CreateJob("etl", {{"ExecutionProperty", {{"MaxConcurrentRuns", 2}}}});
  std::string bad = Start("etl");
  std::string good = Start("etl");
  service_->Tick();
  launcher.throw_for = 1000;
  EXPECT_NO_THROW(service_->Tick());
  Json run = Run("etl", bad);
  EXPECT_EQ(run["JobRunState"], "FAILED");
  EXPECT_TRUE(IsValidUtf8(run["ErrorMessage"].get<std::string>()));
  EXPECT_NE(run["ErrorMessage"].get<std::string>().find("internal error"), std::string::npos);
  EXPECT_EQ(State("etl", good), "RUNNING");
  launcher.Exit(1001, 0);
  service_->Tick();
  EXPECT_EQ(State("etl", good), "SUCCEEDED");
}

TEST_F(JobServiceTest, RunIdsAndCredentialsComeFromTheInjectedRandom) {
  CreateJob("etl");
  std::string id = Start("etl");
  SeededRandom same{42};
  EXPECT_EQ(id, "jr_" + same.FromAlphabet("0123456789abcdef", 64));
  service_->Tick();
  ASSERT_EQ(launcher_.launched.size(), 1u);
  std::string key_env = "AWS_ACCESS_KEY_ID=OGRUN" + same.FromAlphabet("0123456789abcdef", 15);
  const auto& env = launcher_.launched[0].env;
  EXPECT_NE(std::find(env.begin(), env.end(), key_env), env.end());
}

TEST(JobRunStateTest, NamesRoundTripAndOnlyFourAreActive) {
  int active = 0;
  for (JobRunState state :
       {JobRunState::kStarting, JobRunState::kRunning, JobRunState::kStopping,
        JobRunState::kStopped, JobRunState::kSucceeded, JobRunState::kFailed,
        JobRunState::kTimeout, JobRunState::kError, JobRunState::kWaiting, JobRunState::kExpired}) {
    auto parsed = ParseJobRunState(JobRunStateName(state));
    ASSERT_TRUE(parsed.has_value());
    EXPECT_EQ(*parsed, state);
    active += IsActive(state);
  }
  EXPECT_EQ(active, 4);
  EXPECT_EQ(JobRunStateName(JobRunState::kSucceeded), "SUCCEEDED");
  EXPECT_FALSE(ParseJobRunState("succeeded").has_value());
  EXPECT_FALSE(ParseJobRunState("").has_value());
}

// A launcher whose Launch blocks until released: the ticker is in the middle of I/O.
class BlockingLauncher : public FakeLauncher {
 public:
  Result<int> Launch(const LaunchSpec& spec) override {
    {
      std::unique_lock<std::mutex> lock(mu);
      entered = true;
      cv.notify_all();
      cv.wait(lock, [this] { return released; });
    }
    std::lock_guard<std::mutex> lock(fake_mu);
    return FakeLauncher::Launch(spec);
  }
  ProcessStatus Check(int pid, const std::string& path) override {
    std::lock_guard<std::mutex> lock(fake_mu);
    return FakeLauncher::Check(pid, path);
  }
  Status SignalGroup(int pgid, int signal) override {
    std::lock_guard<std::mutex> lock(fake_mu);
    return FakeLauncher::SignalGroup(pgid, signal);
  }
  void WaitEntered() {
    std::unique_lock<std::mutex> lock(mu);
    cv.wait(lock, [this] { return entered; });
  }
  void Release() {
    std::lock_guard<std::mutex> lock(mu);
    released = true;
    cv.notify_all();
  }
  std::mutex mu, fake_mu;
  std::condition_variable cv;
  bool entered = false, released = false;
};

// Issue 7: the ticker used to hold the service's lock while spawning, committing and draining
// logs, so StartJobRun, GetJobRun and BatchStopJobRun waited on a slow launch. Now they do not.
TEST_F(JobServiceTest, RequestsDoNotWaitForTheTickersIo) {
  BlockingLauncher launcher;
  JobServiceOptions options;
  options.data_dir = dir_;
  auto made = JobService::Make(store_.get(), &clock_, &random_, &launcher, logs_.get(),
                               RunCredentials{}, options);
  ASSERT_TRUE(made.ok());
  service_ = std::move(*made);
  CreateJob("slow_spawn");
  CreateJob("other", {{"JobRunQueuingEnabled", true}});
  std::string slow = Start("slow_spawn");
  std::thread ticker([this] { service_->Tick(); });
  launcher.WaitEntered();  // the ticker is inside Launch
  auto request = std::async(std::launch::async, [this] {
    std::string a = Start("other");
    std::string b = Start("other");  // queued behind a
    auto stopped = service_->BatchStopJobRun(Json{{"JobName", "other"}, {"JobRunIds", {b}}});
    return std::make_pair(a, stopped.ok() ? (*stopped)["SuccessfulSubmissions"].size() : 0u);
  });
  bool finished = request.wait_for(std::chrono::seconds(5)) == std::future_status::ready;
  launcher.Release();
  ticker.join();
  ASSERT_TRUE(finished) << "StartJobRun / BatchStopJobRun waited for the ticker's launch";
  auto [a, stopped] = request.get();
  EXPECT_EQ(stopped, 1u);
  EXPECT_EQ(State("other", a), "STARTING");
  EXPECT_EQ(State("slow_spawn", slow), "RUNNING");
  service_->Tick();
  EXPECT_EQ(State("other", a), "RUNNING");
}

// Many threads start runs of one job at once: exactly MaxConcurrentRuns are accepted without
// queuing, every one with queuing; no id twice; with the ticker running meanwhile.
TEST_F(JobServiceTest, ConcurrentStartsRespectTheLimitAndLoseNothing) {
  BlockingLauncher launcher;
  launcher.Release();
  JobServiceOptions options;
  options.data_dir = dir_;
  options.tick_interval_ms = 1;
  auto made = JobService::Make(store_.get(), &clock_, &random_, &launcher, logs_.get(),
                               RunCredentials{}, options);
  ASSERT_TRUE(made.ok());
  service_ = std::move(*made);
  CreateJob("limited", {{"ExecutionProperty", {{"MaxConcurrentRuns", 5}}}});
  CreateJob("queued", {{"ExecutionProperty", {{"MaxConcurrentRuns", 3}}}, {"JobRunQueuingEnabled", true}});
  service_->Start();
  std::mutex mu;
  std::vector<std::string> limited_ids, queued_ids;
  int refused = 0;
  std::vector<std::thread> threads;
  for (int t = 0; t < 8; ++t) {
    threads.emplace_back([&] {
      for (int i = 0; i < 10; ++i) {
        auto a = service_->StartJobRun(Json{{"JobName", "limited"}});
        auto b = service_->StartJobRun(Json{{"JobName", "queued"}});
        std::lock_guard<std::mutex> lock(mu);
        if (a.ok()) limited_ids.push_back((*a)["JobRunId"]);
        else if (a.status().code() == StatusCode::kConcurrentRunsExceeded) ++refused;
        if (b.ok()) queued_ids.push_back((*b)["JobRunId"]);
      }
    });
  }
  for (auto& t : threads) t.join();
  service_->Stop();
  service_->Tick();  // whatever the background ticker had not reached yet
  service_->Tick();
  EXPECT_EQ(limited_ids.size(), 5u);
  EXPECT_EQ(refused, 75);
  EXPECT_EQ(queued_ids.size(), 80u);
  std::set<std::string> distinct(queued_ids.begin(), queued_ids.end());
  EXPECT_EQ(distinct.size(), 80u);
  // Nothing finishes (the fake processes never exit): exactly 3 of the queued job run.
  int running = 0, waiting = 0;
  for (const std::string& id : queued_ids) {
    std::string state = State("queued", id);
    running += state == "RUNNING";
    waiting += state == "WAITING";
  }
  EXPECT_EQ(running, 3);
  EXPECT_EQ(waiting, 77);
  auto runs = service_->GetJobRuns(Json{{"JobName", "queued"}, {"MaxResults", 200}});
  ASSERT_TRUE(runs.ok());
  EXPECT_EQ((*runs)["JobRuns"].size(), 80u);
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

TEST_F(JobServiceTest, DeleteJobRunsTheHookInItsTransaction) {
  // The hook deletes a row of another module in DeleteJob's transaction; when it fails, the
  // whole DeleteJob is rolled back.
  bool fail = true;
  on_delete_job_ = [&fail](store::Transaction* txn, const std::string& job) -> Status {
    OG_RETURN_NOT_OK(txn->Delete("job_bookmark", job).status());
    if (fail) return Status::Internal("hook failed");
    return Status::OK();
  };
  MakeService();
  CreateJob("etl");
  {
    auto txn = store_->BeginWrite();
    ASSERT_TRUE(txn.ok());
    ASSERT_TRUE((*txn)->Put("job_bookmark", "etl", "{}").ok());
    ASSERT_TRUE((*txn)->Commit().ok());
  }
  auto bookmark = [&]() {
    auto txn = store_->BeginRead();
    EXPECT_TRUE(txn.ok());
    auto doc = (*txn)->Get("job_bookmark", "etl");
    return doc.ok() && doc->has_value();
  };
  EXPECT_FALSE(service_->DeleteJob(Json{{"JobName", "etl"}}).ok());
  EXPECT_TRUE(service_->GetJob(Json{{"JobName", "etl"}}).ok());
  EXPECT_TRUE(bookmark());
  fail = false;
  ASSERT_TRUE(service_->DeleteJob(Json{{"JobName", "etl"}}).ok());
  EXPECT_EQ(service_->GetJob(Json{{"JobName", "etl"}}).status().code(), StatusCode::kEntityNotFound);
  EXPECT_FALSE(bookmark());
}

TEST_F(JobServiceTest, FindJobRunGivesEffectiveArguments) {
  CreateJob("etl", Json{{"DefaultArguments", {{"--job-bookmark-option", "job-bookmark-enable"},
                                              {"--x", "1"}}}});
  std::string id = Start("etl", Json{{"Arguments", {{"--job-bookmark-option", "job-bookmark-pause"}}}});
  service_->Tick();
  auto txn = store_->BeginRead();
  ASSERT_TRUE(txn.ok());
  auto facts = FindJobRun(txn->get(), id);
  ASSERT_TRUE(facts.ok() && facts->has_value());
  EXPECT_EQ((*facts)->job, "etl");
  EXPECT_EQ((*facts)->state, "RUNNING");
  EXPECT_EQ((*facts)->attempt, 0);
  EXPECT_EQ((*facts)->arguments["--job-bookmark-option"], "job-bookmark-pause");
  EXPECT_EQ((*facts)->arguments["--x"], "1");
  EXPECT_GT((*facts)->started_on, 0);
  auto none = FindJobRun(txn->get(), "jr_nope");
  ASSERT_TRUE(none.ok());
  EXPECT_FALSE(none->has_value());
}

// Glue Studio visual jobs (docs/visual-jobs.md): the graph is kept as sent; a run without a
// script gets the graph in a file of its folder, and the script it generates there is written to
// the job's script location (Studio's default one here) when the run ends.
TEST_F(JobServiceTest, AVisualJobWithoutAScriptHandsItsGraphToTheRunAndPublishesTheScript) {
  Json nodes = Json::parse(R"({"node-1": {"S3CsvSource": {"Name": "in", "Paths": ["s3://b/in/"],
      "Separator": "comma", "QuoteChar": "quote"}}, "node-2": {"S3DirectTarget": {"Name": "out",
      "Inputs": ["node-1"], "Path": "s3://b/out/", "Format": "json"}}})");
  CreateJob("vis", {{"JobMode", "VISUAL"}, {"Command", {{"Name", "glueetl"}}},
                    {"CodeGenConfigurationNodes", nodes}});
  auto job = service_->GetJob(Json{{"JobName", "vis"}});
  ASSERT_TRUE(job.ok());
  EXPECT_EQ((*job)["Job"]["CodeGenConfigurationNodes"], nodes);
  EXPECT_EQ((*job)["Job"]["JobMode"], "VISUAL");
  std::string id = Start("vis");
  service_->Tick();
  ASSERT_EQ(State("vis", id), "RUNNING");
  ASSERT_EQ(launcher_.launched.size(), 1u);
  const std::string run_dir = dir_ + "/runs/" + id;
  const std::string location = "s3://aws-glue-assets-000000000000-us-east-1/scripts/vis.py";
  const auto& env = launcher_.launched[0].env;
  EXPECT_NE(std::find(env.begin(), env.end(), "OPENGLUE_VISUAL_NODES=" + run_dir + "/visual-nodes.json"),
            env.end());
  EXPECT_NE(std::find(env.begin(), env.end(), "OPENGLUE_VISUAL_SCRIPT_LOCATION=" + location), env.end());
  struct stat st;
  ASSERT_EQ(stat((run_dir + "/visual-nodes.json").c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0600u);
  std::ifstream nodes_file(run_dir + "/visual-nodes.json");
  EXPECT_EQ(ParseJson(std::string((std::istreambuf_iterator<char>(nodes_file)), std::istreambuf_iterator<char>())),
            nodes);
  std::ifstream argv_file(launcher_.launched[0].argv[4]);
  Json argv = ParseJson(std::string((std::istreambuf_iterator<char>(argv_file)), std::istreambuf_iterator<char>()));
  EXPECT_EQ(argv[0], run_dir + "/script/vis.py");
  // The run writes its script (openglue_runtime.studio_codegen) and ends.
  std::ofstream(run_dir + "/script/vis.py") << "print('generated')\n";
  launcher_.Exit(1000, 0);
  service_->Tick();
  EXPECT_EQ(State("vis", id), "SUCCEEDED");
  const std::string published = dir_ + "/s3/aws-glue-assets-000000000000-us-east-1/scripts/vis.py";
  std::ifstream script(published);
  EXPECT_EQ(std::string((std::istreambuf_iterator<char>(script)), std::istreambuf_iterator<char>()),
            "print('generated')\n");
  // The next run finds the script and runs a copy of it: nothing is generated.
  std::string next = Start("vis");
  service_->Tick();
  ASSERT_EQ(launcher_.launched.size(), 2u);
  for (const std::string& e : launcher_.launched[1].env) EXPECT_EQ(e.rfind("OPENGLUE_VISUAL_", 0), std::string::npos);
  EXPECT_FALSE(std::filesystem::exists(dir_ + "/runs/" + next + "/visual-nodes.json"));
  // UpdateJob replaces the definition: without the graph, a run without a script fails.
  ASSERT_TRUE(service_->UpdateJob(Json{{"JobName", "vis"}, {"JobUpdate", {{"Role", "local"},
      {"Command", {{"Name", "glueetl"}}}}}}).ok());
  job = service_->GetJob(Json{{"JobName", "vis"}});
  EXPECT_FALSE((*job)["Job"].contains("CodeGenConfigurationNodes"));
  EXPECT_EQ((*job)["Job"]["JobMode"], "SCRIPT");
}

TEST_F(JobServiceTest, AGeneratedScriptIsNotPublishedThroughALinkNorOverAnExistingObject) {
  Json nodes = Json::parse(R"({"node-1": {"S3ParquetSource": {"Name": "in", "Paths": ["s3://b/in/"]}}})");
  std::filesystem::create_directories(dir_ + "/s3/assets");
  CreateJob("linked", {{"Command", {{"Name", "glueetl"}, {"ScriptLocation", "s3://assets/linked.py"}}},
                       {"CodeGenConfigurationNodes", nodes}});
  CreateJob("raced", {{"Command", {{"Name", "glueetl"}, {"ScriptLocation", "s3://assets/raced.py"}}},
                      {"CodeGenConfigurationNodes", nodes}});
  std::string linked = Start("linked");
  std::string raced = Start("raced");
  service_->Tick();
  ASSERT_EQ(launcher_.launched.size(), 2u);
  // A run that links its script to a file it may not read gets nothing published.
  std::ofstream(dir_ + "/secret.txt") << "server secret\n";
  std::filesystem::create_symlink(dir_ + "/secret.txt", dir_ + "/runs/" + linked + "/script/linked.py");
  // An object that appeared while the other run ran is kept.
  std::ofstream(dir_ + "/runs/" + raced + "/script/raced.py") << "print('generated')\n";
  std::ofstream(dir_ + "/s3/assets/raced.py") << "print('by hand')\n";
  launcher_.ExitAll(0);
  service_->Tick();
  EXPECT_EQ(State("linked", linked), "SUCCEEDED");
  EXPECT_EQ(State("raced", raced), "SUCCEEDED");
  EXPECT_FALSE(std::filesystem::exists(dir_ + "/s3/assets/linked.py"));
  std::ifstream kept(dir_ + "/s3/assets/raced.py");
  EXPECT_EQ(std::string((std::istreambuf_iterator<char>(kept)), std::istreambuf_iterator<char>()),
            "print('by hand')\n");
}

TEST_F(JobServiceTest, AVisualJobWithALocalScriptPathIsNotGenerated) {
  Json nodes = Json::parse(R"({"node-1": {"S3ParquetSource": {"Name": "in", "Paths": ["s3://b/in/"]}}})");
  CreateJob("local", {{"Command", {{"Name", "glueetl"}, {"ScriptLocation", dir_ + "/none.py"}}},
                      {"CodeGenConfigurationNodes", nodes}});
  std::string id = Start("local");
  service_->Tick();
  Json run = Run("local", id);
  EXPECT_EQ(run["JobRunState"], "FAILED");
  EXPECT_NE(run["ErrorMessage"].get<std::string>().find("generated only for an s3:// ScriptLocation"),
            std::string::npos);
  EXPECT_TRUE(launcher_.launched.empty());
}

}  // namespace
}  // namespace openglue::jobs
