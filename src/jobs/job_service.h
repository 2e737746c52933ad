// JobService: Glue job definitions and job runs.
//
// Operations (Glue request -> response documents, already validated against the service model):
// CreateJob, UpdateJob, GetJob, GetJobs, ListJobs, BatchGetJobs, DeleteJob, StartJobRun,
// GetJobRun, GetJobRuns, BatchStopJobRun.
//
// A run is a process (see ProcessLauncher) running the job's Python script. Its state moves
// STARTING -> RUNNING -> SUCCEEDED | FAILED | TIMEOUT, or RUNNING -> STOPPING -> STOPPED, or waits
// in WAITING while the job's MaxConcurrentRuns or the server-wide limit is reached and queuing
// is enabled. Every transition is written to the store before it is reported, so a server
// restart loses no run: Recover() re-adopts runs whose process still lives and finishes the
// others with an explanatory ErrorMessage. Tick() advances the state machine (launches queued
// runs, notices exits, enforces timeouts, schedules retries); the server calls it from a
// background thread, tests call it directly with a FakeClock and a fake launcher.
//
// Thread-safe.
#pragma once

#include <condition_variable>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "common/clock.h"
#include "common/json.h"
#include "common/status.h"
#include "jobs/run_output.h"
#include "jobs/process_launcher.h"
#include "store/metadata_store.h"
#include "storage/object_store.h"

namespace openglue::jobs {

struct JobServiceOptions {
  std::string data_dir;               // runs/<run id>/ (work, tmp, exit code), s3/ (local S3)
  std::string endpoint;               // how a run calls back to the server, e.g. http://127.0.0.1:4690
  std::string region = "us-east-1";
  std::string account_id = "000000000000";
  std::string python = "python3";     // interpreter for glueetl and pythonshell scripts
  std::string runtime_path;           // prepended to the scripts' PYTHONPATH (the awsglue package)
  int max_concurrent_runs = 16;       // server-wide; further runs wait in WAITING
  int stop_grace_seconds = 10;        // BatchStopJobRun: SIGTERM, then SIGKILL after this
  int tick_interval_ms = 10;
  // Where s3:// paths (scripts, --extra-py-files, --extra-files) are read. Borrowed; it must
  // outlive the service. Null: the embedded store over <data_dir>/s3.
  storage::ObjectStore* objects = nullptr;
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

class JobService {
 public:
  // Borrowed: store, clock, launcher, logs; they must outlive the service.
  static Result<std::unique_ptr<JobService>> Make(store::MetadataStore* store, const Clock* clock,
                                                  ProcessLauncher* launcher, RunOutput* logs,
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

  // Reconciles runs left active by an earlier server process. Call once before Start/Tick.
  Status Recover();
  // One step of the state machine over every active run.
  void Tick();
  // Runs Tick() every tick_interval_ms on a background thread until Stop(). Runs keep going
  // when the server stops; the next server process re-adopts them.
  void Start();
  void Stop();

 private:
  JobService(store::MetadataStore* store, const Clock* clock, ProcessLauncher* launcher,
             RunOutput* logs, RunCredentials credentials, JobServiceOptions options);

  struct ActiveRun;
  Status TickRun(ActiveRun* run);
  Status Launch(ActiveRun* run, Json* doc);
  Status Finish(ActiveRun* run, Json* doc, const std::string& state, const std::string& error);
  Status SaveRun(const std::string& key, const Json& doc);
  Result<Json> LoadRun(const std::string& key);
  Result<std::string> CreateRun(const Json& job, const Json& arguments, const Json& request,
                                int attempt, const std::string& previous_run_id);
  int ActiveCount(const std::string& job) const;  // REQUIRES(mutex_)
  int LaunchedCount() const;                      // REQUIRES(mutex_)
  std::string RunDir(const std::string& run_id) const;
  std::string JobArn(const std::string& name) const;
  // A local path for the file at `uri`, for the run's process to open. An s3://, s3a:// or
  // s3n:// object is read through the object store (confined: storage/local_object_store.h)
  // and copied to `copy_to`; a file:// or plain path is returned as it is (the run opens it with
  // its own rights). InvalidInput (a location the store refuses, a folder) or EntityNotFound,
  // with a message naming `uri`.
  Result<std::string> LocalPath(const std::string& uri, const std::string& copy_to) const;
  // Wakes the ticker for an immediate Tick (a run was started or stopped).
  void Kick();

  store::MetadataStore* store_;
  const Clock* clock_;
  ProcessLauncher* launcher_;
  RunOutput* logs_;
  RunCredentials credentials_;
  JobServiceOptions options_;
  std::unique_ptr<storage::ObjectStore> own_objects_;  // the embedded store, unless given one
  storage::ObjectStore* objects_ = nullptr;

  mutable std::mutex mutex_;
  // Active runs by sequence number, i.e. in start order (the queue is FIFO).
  std::map<uint64_t, std::unique_ptr<ActiveRun>> active_;  // GUARDED_BY(mutex_)
  uint64_t next_sequence_ = 0;                                  // GUARDED_BY(mutex_)

  std::mutex thread_mutex_;
  std::condition_variable wake_;
  bool stopping_ = false;  // GUARDED_BY(thread_mutex_)
  bool kicked_ = false;    // GUARDED_BY(thread_mutex_): tick now, work is waiting
  std::thread ticker_;
};

}  // namespace openglue::jobs
