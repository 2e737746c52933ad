// JobService: Glue job definitions and job runs.
//
// Operations (Glue request -> response documents, already validated against the service model):
// CreateJob, UpdateJob, GetJob, GetJobs, ListJobs, BatchGetJobs, DeleteJob, StartJobRun,
// GetJobRun, GetJobRuns, BatchStopJobRun.
//
// A run is a process (see ProcessLauncher) running the job's Python script. Its state moves
// STARTING -> RUNNING -> SUCCEEDED | FAILED | TIMEOUT, or RUNNING -> STOPPING -> STOPPED, or waits
// in WAITING while the job's MaxConcurrentRuns or the server-wide limit is reached and queuing
// is enabled; a run that could not be started ends in ERROR. Every transition is written to the
// store before it is reported, so a server restart loses no run: Recover() re-adopts runs whose
// process still lives and finishes the others with an explanatory ErrorMessage. Tick() advances
// the state machine (launches queued runs, notices exits, enforces timeouts, schedules
// retries); the server calls it from a background thread, tests call it directly with a
// FakeClock and a fake launcher.
//
// Any Command.Name is accepted and stored (as Glue does); a run of a command other than
// glueetl or pythonshell ends FAILED with "Could not find command for the given criteria".
//
// Text from a run's process or files (its stderr, the OS's error messages) is sanitized to
// valid UTF-8 before it reaches a run document; a stored document that cannot be read ends its
// run with an error instead of stopping the server; nothing thrown on the ticker thread or in
// Recover() ends the process (the run concerned is ended FAILED or ERROR with a message).
//
// Thread-safe. Locking: one mutex guards the in-memory table of active runs; decisions (which
// run launches, which is refused or queued) are taken under it, and the I/O that carries them
// out (store commits, process spawns, draining logs) happens outside it. A run whose I/O is in
// progress is marked busy; only the thread that marked it touches it until it is released.
#pragma once

#include <atomic>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "common/clock.h"
#include "common/json.h"
#include "common/random.h"
#include "common/status.h"
#include "common/thread_annotations.h"
#include "jobs/job_run_state.h"
#include "jobs/run_output.h"
#include "jobs/process_launcher.h"
#include "jobs/store_view.h"
#include "store/metadata_store.h"
#include "storage/object_store.h"

namespace openglue::jobs {

// A job run that reached a final state, as the schedule module sees it (conditional triggers,
// workflow runs).
struct JobRunEnded {
  std::string run_id;
  std::string job;
  JobRunState state = JobRunState::kSucceeded;
  std::string previous_run_id;  // the run this one retries, "" for a first attempt
  std::string trigger_name;     // the trigger that started it, "" when started by hand
  bool retrying = false;        // FAILED with attempts left: a retry run follows
};

// Tells another module, durably, that a run ended. `record` runs inside the store transaction
// that writes the run's final state, so the two commit together or not at all (an error rolls
// the save back; the ticker tries again). `notify` runs after that commit. Either may be empty.
struct RunEndedHook {
  std::function<Status(store::Transaction* txn, const JobRunEnded& ended)> record;
  std::function<void()> notify;
};

struct JobServiceOptions {
  std::string data_dir;               // runs/<run id>/ (work, tmp, exit code), s3/ (local S3)
  std::string endpoint;               // how a run calls back to the server, e.g. http://127.0.0.1:4690
  // The S3 API over the embedded store (AWS_ENDPOINT_URL_S3 of runs), "" when it is off. The
  // run's credential works there too (RunCredentials::grant registers it on both).
  std::string s3_endpoint;
  // The server's Hive Metastore front end (OPENGLUE_HMS_URI of runs, "thrift://127.0.0.1:<port>"),
  // "" when it is off.
  std::string hms_uri;
  std::string region = "us-east-1";
  std::string account_id = "000000000000";
  std::string python = "python3";     // interpreter for glueetl and pythonshell scripts
  std::string runtime_path;           // prepended to the scripts' PYTHONPATH (the awsglue package)
  // Where glueetl runs on the Spark engine send their work (OPENGLUE_SPARK_MASTER) unless the
  // run's `--spark-master` argument says otherwise; "" means local[*].
  std::string spark_master;
  int max_concurrent_runs = 16;       // server-wide; further runs wait in WAITING
  int stop_grace_seconds = 10;        // BatchStopJobRun: SIGTERM, then SIGKILL after this
  int tick_interval_ms = 10;
  // The --additional-python-modules environments (<data_dir>/python-modules) no run used for
  // this many days are removed, checked hourly by the ticker; 0 = kept forever.
  int python_modules_retention_days = 30;
  // Where s3:// paths (scripts, --extra-py-files, --extra-files) are read. Borrowed; it must
  // outlive the service. Null: the embedded store over <data_dir>/s3.
  storage::ObjectStore* objects = nullptr;
  // Called inside DeleteJob's store transaction, after the job's own rows are deleted, to
  // delete what other modules keep for the job (its bookmark). An error rolls DeleteJob back.
  std::function<Status(store::Transaction* txn, const std::string& job)> on_delete_job;
  // Told of every run that ends (triggers and workflows, src/schedule).
  RunEndedHook run_ended;
  // What runs of a Role may reach of <data_dir>/s3 through the file system (jobs/store_view.h);
  // unset: everything. The launcher applies it when runs have uids of their own.
  std::function<StoreGrants(const std::string& role)> store_grants;
};

// The credential a run uses to call back to the server, and what it stands for.
struct RunGrant {
  std::string access_key_id;
  std::string job;
  std::string run_id;
  std::string role;  // the job's Role: it selects what the credential may do
};

// Grants and revokes the SigV4 credential a run uses to call back to the server. `grant`
// returns the credential's secret access key, which the run gets in its environment and which
// is never stored: the same grant after a restart must return the same secret (e.g. derived from
// a server key, api/run_secrets.h).
struct RunCredentials {
  std::function<std::string(const RunGrant& grant)> grant;
  std::function<void(const std::string& access_key_id)> revoke;
};

// For resource::TagService::Register("job", ...): OK when resource {"job", name} names an
// existing job, else EntityNotFound.
Status JobExists(store::Transaction* txn, const std::vector<std::string>& resource);

// What other modules may read of a job run (read-only, in the caller's transaction).
struct JobRunFacts {
  std::string job;
  std::string state;    // JobRunState name
  int64_t attempt = 0;
  Json arguments;       // effective: the job's DefaultArguments, the run's Arguments over them
  double started_on = 0;
  double last_modified_on = 0;
  double completed_on = 0;       // 0 while the run is active
  int64_t execution_time = 0;    // seconds
  std::string error_message;     // "" when none
  int64_t timeout_minutes = 0;
};

// A run that another module asks for (data-quality evaluation and recommendation runs): a
// module of the Python runtime rather than a job's script. It is kept, launched, watched, timed
// out, stopped and recovered exactly as a job run (state machine, credential, sandbox, logs
// under its run id), under the job name `owner`, which names no stored job: GetJobRun and
// BatchStopJobRun with JobName `owner` reach it. The process runs
// `python -m <module> --spec <run folder>/spec.json` on the embedded engine, where spec.json
// holds `spec`; its credential is granted for `role` with job `owner` and run `run_id`.
// The prefix of the owner job names of module runs ("openglue:data-quality-evaluation"): the
// public job API refuses it (api/router.cc), so no user job shares their runs.
inline constexpr const char* kReservedJobPrefix = "openglue:";

struct ModuleRun {
  std::string owner;
  std::string run_id;
  std::string module;
  Json spec = Json::object();
  std::string role;
  int64_t timeout_minutes = 2880;
};
// The run with id `run_id`, or nullopt when there is none. Errors: the store's, or Internal
// when its record cannot be read.
Result<std::optional<JobRunFacts>> FindJobRun(store::Transaction* txn, const std::string& run_id);

class JobService {
 public:
  // Borrowed: store, clock, random, launcher, logs; they must outlive the service. `random`
  // makes run ids and run credentials (SystemRandom in the server; calls to it are serialized
  // by the service, so a SeededRandom is fine in tests).
  static Result<std::unique_ptr<JobService>> Make(store::MetadataStore* store, const Clock* clock,
                                                  Random* random, ProcessLauncher* launcher,
                                                  RunOutput* logs,
                                                  RunCredentials credentials,
                                                  JobServiceOptions options);
  ~JobService();

  using Operation = Result<Json> (JobService::*)(const Json& request);
  static const std::vector<std::pair<std::string, Operation>>& Operations();

  Result<Json> CreateJob(const Json& request);
  Result<Json> UpdateJob(const Json& request);
  Result<Json> GetJob(const Json& request);
  Result<Json> GetJobs(const Json& request);
  Result<Json> ListJobs(const Json& request);
  Result<Json> BatchGetJobs(const Json& request);
  Result<Json> DeleteJob(const Json& request);
  Result<Json> StartJobRun(const Json& request);
  Result<Json> GetJobRun(const Json& request);
  Result<Json> GetJobRuns(const Json& request);
  Result<Json> BatchStopJobRun(const Json& request);

  // Starts a run for a trigger: `request` is a StartJobRun request (JobName, Arguments, Timeout,
  // NotificationProperty, SecurityConfiguration); the run gets the id `run_id` (chosen by the
  // caller, "jr_" and 64 hex digits) and TriggerName `trigger_name`. Idempotent on the id: when
  // a run with `run_id` exists already (a fire repeated after a restart) nothing is started and
  // OK is returned. Errors as StartJobRun's (EntityNotFound for a deleted job,
  // ConcurrentRunsExceeded, InvalidInput).
  Status StartTriggeredRun(const Json& request, const std::string& run_id,
                           const std::string& trigger_name);
  // StartTriggeredRun for many runs at once: the new runs are created in one store transaction
  // (a burst of scheduled fires costs one commit). Returns one status per run, in order.
  struct TriggeredRun {
    Json request;
    std::string run_id;
    std::string trigger_name;
  };
  std::vector<Status> StartTriggeredRuns(const std::vector<TriggeredRun>& runs);

  // Starts `run` (see ModuleRun). AlreadyExists when a run with its id exists; InvalidInput for
  // an empty owner, id or module, or a Timeout below 1; the store's errors.
  Status StartModuleRun(const ModuleRun& run);

  // Every object in the store that some job runs as code, "bucket/key" -> a job's name: its
  // Command.ScriptLocation, and the entries of --extra-py-files, --extra-files, --extra-jars and
  // --additional-python-modules in its DefaultArguments and NonOverridableArguments (s3://,
  // s3a://, s3n:// ones; an entry ending in '/' stands for every key under it and is returned
  // with its '/'). Neither the S3 API nor a run's view of the store lets a run change these
  // (docs/security.md, "What a run may do to the object store"). Reads the store.
  Result<std::map<std::string, std::string>> CodeObjects() const;
  // Protects jobs' code, as it is now, in the store view of every running run (after CreateJob
  // and UpdateJob, so new code is protected from the moment a job names it). Failures are
  // logged, never returned: the job change stands.
  void ProtectCodeInRunningRuns() EXCLUDES(mutex_);

  // The run credential (access key id) of the active run whose processes run as `uid`, or
  // nullopt when no active run has that uid (the launcher gives runs no uid of their own, or
  // the uid belongs to no running run).
  std::optional<std::string> RunCredentialOfUid(uid_t uid) const EXCLUDES(mutex_);

  // Reconciles runs left active by an earlier server process. Call once before Start/Tick.
  // A stored run that cannot be read is ended ERROR with a message, not an error of Recover;
  // errors are only those of the store itself.
  Status Recover() EXCLUDES(mutex_);
  // One step of the state machine over every active run. Never throws.
  void Tick() EXCLUDES(mutex_);
  // Runs Tick() every tick_interval_ms on a background thread until Stop(). Runs keep going
  // when the server stops; the next server process re-adopts them.
  void Start() EXCLUDES(thread_mutex_);
  void Stop() EXCLUDES(thread_mutex_);

 private:
  void TickerLoop() EXCLUDES(thread_mutex_);
  JobService(store::MetadataStore* store, const Clock* clock, Random* random,
             ProcessLauncher* launcher, RunOutput* logs, RunCredentials credentials,
             JobServiceOptions options);

  struct ActiveRun;
  enum class Step;
  // Chooses what the ticker does next with `run` (and reserves a launch slot when it launches).
  Step DecideStep(ActiveRun* run) REQUIRES(mutex_);
  // Carries out `step` on `run`, a copy of the active run that the ticker owns while it is busy.
  Status ExecuteStep(Step step, ActiveRun* run) EXCLUDES(mutex_);
  // After an exception or an unreadable document: ends `run` FAILED (it was launched) or ERROR
  // with `message`, as well as the store allows. Never throws.
  void Abandon(ActiveRun* run, const std::string& message) EXCLUDES(mutex_);
  // Marks `run` busy and returns a copy for the caller to work on outside the lock; Release
  // puts the copy back, clears busy, drops the run from the table once it is final, and wakes
  // the threads waiting for a busy run.
  ActiveRun Acquire(ActiveRun* run) REQUIRES(mutex_);
  void Release(const ActiveRun& work) EXCLUDES(mutex_);
  Status Launch(ActiveRun* run, Json* doc) EXCLUDES(mutex_);
  Status Finish(ActiveRun* run, Json* doc, JobRunState state, const std::string& error)
      EXCLUDES(mutex_);
  // Where a visual job without Command.ScriptLocation has its script, as Glue Studio puts it:
  // s3://aws-glue-assets-<account>-<region>/scripts/<job>.py.
  std::string DefaultScriptLocation(const std::string& job) const;
  // A run that generated its script from the job's CodeGenConfigurationNodes (`_og.
  // generated_script` of `doc`): the script in its folder is written to the job's script
  // location, unless an object is there already. Failures are logged; the run is not affected.
  void PublishGeneratedScript(const ActiveRun& run, const Json& doc) EXCLUDES(mutex_);
  // RUNNING or STOPPING: checks the process, enforces the timeout and the stop grace, and
  // finishes the run once its process has ended.
  Status WatchRun(ActiveRun* run) EXCLUDES(mutex_);
  Status SaveRun(const std::string& key, const Json& doc);
  // The stored document of `run`, or when it cannot be read (damaged or missing), a replacement
  // built from `run` with `*unreadable` set to a message saying so. Errors: the store's.
  Result<Json> LoadRunOrRebuild(const ActiveRun& run, std::string* unreadable);
  // A run being created: entered (busy) in the active table, its document built, not yet
  // committed. CommitRuns writes runs in one transaction and releases them (or drops them from
  // the table when the commit fails).
  struct NewRun {
    uint64_t sequence = 0;
    std::string key;
    std::string run_id;
    std::string job;
    Json doc;
    bool waiting = false;
    int attempt = 0;
  };
  Result<NewRun> PrepareRun(const Json& job, const Json& arguments, const Json& request,
                            int attempt, const std::string& previous_run_id,
                            const std::string& run_id, const std::string& trigger_name)
      EXCLUDES(mutex_);
  Status CommitRuns(const std::vector<NewRun>& runs) EXCLUDES(mutex_);
  // `run_id` "" makes a new id; `trigger_name` "" for runs not started by a trigger.
  Result<std::string> CreateRun(const Json& job, const Json& arguments, const Json& request,
                                int attempt, const std::string& previous_run_id,
                                const std::string& run_id = "",
                                const std::string& trigger_name = "") EXCLUDES(mutex_);
  int ActiveCount(const std::string& job) const REQUIRES(mutex_);
  int LaunchedCount() const REQUIRES(mutex_);
  std::string NewRandomHex(size_t digits) EXCLUDES(random_mutex_);
  std::string RunDir(const std::string& run_id) const;
  std::string JobArn(const std::string& name) const;
  // A local path for the file at `uri`, for the run's process to open. An s3://, s3a:// or
  // s3n:// object is read through the object store (confined: storage/local_object_store.h)
  // and copied to `copy_to`; a file:// or plain path is returned as it is (the run opens it with
  // its own rights). InvalidInput (a location the store refuses, a folder) or EntityNotFound,
  // with a message naming `uri`.
  Result<std::string> LocalPath(const std::string& uri, const std::string& copy_to) const;
  // The run's --extra-jars (`value`) as local paths, comma-separated: objects copied into
  // <dir>/jars/, local files as they are. InvalidInput naming an entry that cannot be used.
  Result<std::string> RunJars(const std::string& value, const std::string& dir) const;
  // The run's --additional-python-modules: writes <dir>/python-modules/spec.json (the objects it
  // names copied beside it) and returns the options of `__python-modules` (jobs/
  // module_environments.h); empty when the run has none. InvalidInput naming an entry that cannot be
  // used.
  Result<std::vector<std::string>> PythonModulesOf(const Json& arguments, const std::string& dir,
                                                   const std::string& run_id) const;
  // Wakes the ticker for an immediate Tick (a run was started or stopped).
  void Kick() EXCLUDES(thread_mutex_);

  store::MetadataStore* store_;
  const Clock* clock_;
  ProcessLauncher* launcher_;
  RunOutput* logs_;
  RunCredentials credentials_;
  JobServiceOptions options_;
  std::unique_ptr<storage::ObjectStore> own_objects_;  // the embedded store, unless given one
  storage::ObjectStore* objects_ = nullptr;
  std::string store_folder_;  // <data_dir>/s3, resolved once (the runs' store views are of it)
  // The code pins last added to running runs' views: a job change that names no new code adds
  // none again.
  Mutex pins_mutex_;
  std::vector<std::string> pins_applied_ GUARDED_BY(pins_mutex_);

  Mutex random_mutex_;
  Random* random_ PT_GUARDED_BY(random_mutex_);

  mutable Mutex mutex_;
  // Active runs by sequence number, i.e. in start order (the queue is FIFO).
  std::map<uint64_t, std::unique_ptr<ActiveRun>> active_ GUARDED_BY(mutex_);
  uint64_t next_sequence_ GUARDED_BY(mutex_) = 0;
  // Signalled whenever a busy run is released (or dropped).
  CondVar released_;

  Mutex thread_mutex_;
  CondVar wake_;
  bool stopping_ GUARDED_BY(thread_mutex_) = false;
  bool kicked_ GUARDED_BY(thread_mutex_) = false;  // tick now, work is waiting
  std::thread ticker_ GUARDED_BY(thread_mutex_);
  // When the ticker last cleaned the Python modules cache (clock ms; only the ticker's thread,
  // or a test's, calls Tick).
  std::atomic<int64_t> modules_cleaned_ms_{-1};
};

}  // namespace openglue::jobs
