// The run state machine: each tick decides a step per active run (start, launch, requeue,
// watch), watches processes, enforces stops and timeouts and finishes runs.
#include "jobs/job_service_internal.h"
#include "jobs/module_environments.h"

#include <sys/stat.h>

namespace openglue::jobs {

std::string JobService::DefaultScriptLocation(const std::string& job) const {
  return "s3://aws-glue-assets-" + options_.account_id + "-" + options_.region + "/scripts/" + job + ".py";
}

void JobService::PublishGeneratedScript(const ActiveRun& run, const Json& doc) {
  const Json& generated = GetObject(GetObject(doc, "_og"), "generated_script");
  std::string location = GetString(generated, "location");
  std::string file = GetString(generated, "file");
  if (location.empty() || file.empty() || file.find('/') != std::string::npos || file == "." || file == "..")
    return;
  Result<storage::Location> target = storage::ParseLocation(location);
  if (!target.ok() || target->scheme != storage::LocationScheme::kObject) return;
  // The run's folder belongs to the run's user: each step is opened without following links,
  // so the run cannot make the server read a file of its own choosing.
  std::string dir = RunDir(run.run_id);
  int dir_fd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  if (dir_fd < 0) return;
  int script_fd = ::openat(dir_fd, "script", O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  ::close(dir_fd);
  if (script_fd < 0) return;
  int fd = ::openat(script_fd, file.c_str(), O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK);
  ::close(script_fd);
  if (fd < 0) return;  // generation failed: nothing to write
  constexpr off_t kMaxScriptBytes = 16 << 20;
  struct stat st;
  std::string text;
  bool readable = fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && st.st_size <= kMaxScriptBytes;
  if (readable) {
    text.resize(static_cast<size_t>(st.st_size));
    size_t done = 0;
    while (done < text.size()) {
      ssize_t n = ::read(fd, text.data() + done, text.size() - done);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) break;
      done += static_cast<size_t>(n);
    }
    text.resize(done);
  }
  ::close(fd);
  if (!readable || text.empty()) return;
  // A script put there meanwhile (by the user, or by another run) is never replaced.
  Result<storage::ObjectInfo> existing = objects_->Stat(target->bucket, target->key);
  if (existing.ok()) return;
  Status written = objects_->Write(target->bucket, target->key, text);
  if (written.code() == StatusCode::kEntityNotFound) {
    Status bucket = objects_->CreateBucket(target->bucket);
    written = bucket.ok() ? objects_->Write(target->bucket, target->key, text) : bucket;
  }
  if (written.ok())
    OG_LOG(kInfo, "job " << run.job << " run " << run.run_id
                         << ": script generated from CodeGenConfigurationNodes written to " << location);
  else
    OG_LOG(kWarn, "job " << run.job << " run " << run.run_id << ": the script generated from "
                         << "CodeGenConfigurationNodes could not be written to " << location << ": "
                         << written.message());
}

Status JobService::Finish(ActiveRun* run, Json* doc, JobRunState state, const std::string& error) {
  PublishGeneratedScript(*run, *doc);
  double now = clock_->NowSeconds();
  (*doc)["JobRunState"] = StateName(state);
  (*doc)["LastModifiedOn"] = now;
  (*doc)["CompletedOn"] = now;
  if (run->started_ms > 0) {
    int64_t seconds = (clock_->NowMillis() - run->started_ms + 999) / 1000;
    (*doc)["ExecutionTime"] = seconds;
  }
  // Messages can carry text from the process, the OS or a file: valid UTF-8, bounded.
  if (!error.empty()) (*doc)["ErrorMessage"] = TruncateUtf8(error, kMaxErrorMessageBytes);
  std::string access_key = GetString(GetObject(*doc, "_og"), "access_key", run->access_key);
  if (!access_key.empty() && credentials_.revoke) credentials_.revoke(access_key);
  if (run->pid > 0) logs_->Finish(run->run_id);
  OG_LOG(kInfo, "job " << run->job << " run " << run->run_id << " " << StateName(state)
                       << (error.empty() ? "" : ": " + TruncateUtf8(error, kMaxErrorMessageBytes)));
  // Final in memory only once it is in the store: a failed commit is tried again next tick.
  OG_RETURN_NOT_OK(SaveRun(run->key, *doc));
  run->state = state;
  // A failed run is retried as a new run while attempts remain; a timeout is not.
  if (state == JobRunState::kFailed) {
    int64_t attempt = GetInt(*doc, "Attempt", 0);
    int64_t max_retries = GetInt(GetObject(*doc, "_og"), "max_retries", 0);
    if (attempt < max_retries) {
      OG_ASSIGN_OR_RETURN(auto txn, store_->BeginRead());
      OG_ASSIGN_OR_RETURN(auto job_doc, txn->Get(kJob, run->job));
      txn.reset();
      Json job = job_doc ? ParseJson(*job_doc) : Json();
      if (job_doc && !job.is_object())
        OG_LOG(kWarn, "retry of " << run->run_id << " not started: the job's record cannot be read");
      if (job.is_object()) {
        Json request{{"JobRunQueuingEnabled", true}};
        for (const char* member : {"Timeout", "MaxCapacity", "WorkerType", "NumberOfWorkers"})
          if (doc->contains(member)) request[member] = (*doc)[member];
        auto retry = CreateRun(job, GetObject(*doc, "Arguments"), request,
                               static_cast<int>(attempt + 1), run->run_id, "",
                               GetString(*doc, "TriggerName"));
        if (!retry.ok()) OG_LOG(kWarn, "retry of " << run->run_id << " not started: " << retry.status().message());
      }
    }
  }
  return Status::OK();
}

JobService::Step JobService::DecideStep(ActiveRun* run) {
  switch (run->state) {
    case JobRunState::kWaiting:
      // Held back by the job's own limit, or by the server's?
      if (ActiveCount(run->job) >= run->max_concurrent_runs) return Step::kNone;
      if (LaunchedCount() >= options_.max_concurrent_runs) return Step::kNone;
      run->state = JobRunState::kStarting;
      run->launching = true;
      return Step::kStartWaiting;
    case JobRunState::kStarting:
      if (LaunchedCount() >= options_.max_concurrent_runs) {
        run->state = JobRunState::kWaiting;
        return Step::kRequeue;
      }
      run->launching = true;
      return Step::kLaunch;
    case JobRunState::kRunning:
    case JobRunState::kStopping:
      return Step::kWatch;
    default:
      return Step::kNone;
  }
}

Status JobService::ExecuteStep(Step step, ActiveRun* run) {
  if (step == Step::kWatch) return WatchRun(run);
  std::string unreadable;
  OG_ASSIGN_OR_RETURN(Json doc, LoadRunOrRebuild(*run, &unreadable));
  if (!unreadable.empty()) return Finish(run, &doc, JobRunState::kError, unreadable);
  switch (step) {
    case Step::kStartWaiting:
      doc["JobRunState"] = StateName(JobRunState::kStarting);
      doc["LastModifiedOn"] = clock_->NowSeconds();
      OG_RETURN_NOT_OK(SaveRun(run->key, doc));
      return Launch(run, &doc);
    case Step::kLaunch:
      return Launch(run, &doc);
    case Step::kRequeue:
      doc["JobRunState"] = StateName(JobRunState::kWaiting);
      return SaveRun(run->key, doc);
    default:
      return Status::OK();
  }
}

Status JobService::WatchRun(ActiveRun* run) {
  ProcessStatus status = launcher_->Check(run->pid, run->exit_code_path);
  int64_t now = clock_->NowMillis();
  if (status.state == ProcessState::kRunning) {
    if (run->state == JobRunState::kRunning && run->timeout_minutes > 0 &&
        now - run->started_ms >= run->timeout_minutes * 60000) {
      run->killed_for_timeout = true;
      run->state = JobRunState::kStopping;  // internal: waiting for the group to die
      run->stop_requested_ms = now;
      (void)launcher_->SignalGroup(run->pid, SIGKILL);
      run->sigkill_sent = true;
    } else if (run->state == JobRunState::kStopping && !run->sigkill_sent &&
               now - run->stop_requested_ms >= options_.stop_grace_seconds * 1000LL) {
      (void)launcher_->SignalGroup(run->pid, SIGKILL);
      run->sigkill_sent = true;
    }
    return Status::OK();
  }
  // The run's main process has ended: leave no child of it behind, whatever the outcome.
  (void)launcher_->SignalGroup(run->pid, SIGKILL);
  std::string unreadable;
  OG_ASSIGN_OR_RETURN(Json doc, LoadRunOrRebuild(*run, &unreadable));
  if (!unreadable.empty()) return Finish(run, &doc, JobRunState::kError, unreadable);
  if (run->killed_for_timeout) {
    return Finish(run, &doc, JobRunState::kTimeout,
                  "Job run timed out after " + std::to_string(run->timeout_minutes) +
                      " minutes; its processes were terminated.");
  }
  if (run->state == JobRunState::kStopping) return Finish(run, &doc, JobRunState::kStopped, "");
  if (status.state == ProcessState::kExited && status.exit_code == 0)
    return Finish(run, &doc, JobRunState::kSucceeded, "");
  // The process wrote its stderr file itself, so it can be read before the log tailer drains it.
  std::string error = ErrorFromStderr(logs_->StderrPath(run->run_id));
  if (status.state == ProcessState::kExited) {
    if (error.empty()) error = "The job script exited with status " + std::to_string(status.exit_code);
  } else {
    error = "The job run's process ended without an exit status (killed)" + (error.empty() ? "" : ": " + error);
  }
  return Finish(run, &doc, JobRunState::kFailed, error);
}

void JobService::Abandon(ActiveRun* run, const std::string& message) {
  // Best effort, step by step: each part may fail without stopping the others.
  JobRunState final_state = run->pid > 0 ? JobRunState::kFailed : JobRunState::kError;
  OG_LOG(kError, "job " << run->job << " run " << run->run_id << ": " << message);
  try {
    if (run->pid > 0) (void)launcher_->SignalGroup(run->pid, SIGKILL);
  } catch (...) {
  }
  try {
    if (!run->access_key.empty() && credentials_.revoke) credentials_.revoke(run->access_key);
  } catch (...) {
  }
  try {
    if (run->pid > 0) logs_->Finish(run->run_id);
  } catch (...) {
  }
  try {
    std::string unreadable;
    Result<Json> loaded = LoadRunOrRebuild(*run, &unreadable);
    Json doc = loaded.ok() ? std::move(*loaded) : Json{{"Id", run->run_id}, {"JobName", run->job}};
    double now = clock_->NowSeconds();
    doc["JobRunState"] = StateName(final_state);
    doc["LastModifiedOn"] = now;
    doc["CompletedOn"] = now;
    doc["ErrorMessage"] = TruncateUtf8(message, kMaxErrorMessageBytes);
    // Abandoned runs are not retried: say so to whoever is told of the end.
    if (!doc.contains("_og") || !doc["_og"].is_object()) doc["_og"] = Json::object();
    doc["_og"]["max_retries"] = 0;
    Status st = SaveRun(run->key, doc);
    if (!st.ok()) OG_LOG(kError, "run " << run->run_id << " could not be saved: " << st.message());
  } catch (const std::exception& e) {
    OG_LOG(kError, "run " << run->run_id << " could not be saved: " << SanitizeUtf8(e.what()));
  } catch (...) {
  }
  // Dropped from the table either way: a run that throws on every tick must not take the
  // ticker with it.
  run->state = final_state;
}

void JobService::Tick() {
  // Hourly (and at the first tick): --additional-python-modules environments long unused go.
  int64_t now_ms = clock_->NowMillis();
  int64_t cleaned = modules_cleaned_ms_.load();
  if (options_.python_modules_retention_days > 0 && (cleaned < 0 || now_ms - cleaned >= 3600 * 1000) &&
      modules_cleaned_ms_.compare_exchange_strong(cleaned, now_ms)) {
    int removed = CleanPythonModulesCache(options_.data_dir + "/python-modules", now_ms / 1000,
                                          int64_t{options_.python_modules_retention_days} * 86400);
    if (removed > 0)
      OG_LOG(kInfo, "removed " << removed << " --additional-python-modules environment(s) unused for "
                               << options_.python_modules_retention_days << " days");
  }
  std::vector<uint64_t> sequences;
  {
    MutexLock lock(&mutex_);
    for (auto& [seq, run] : active_) sequences.push_back(seq);
  }
  // Jobs with an earlier WAITING run whose creation is still being committed: their later
  // waiting runs do not overtake it.
  std::set<std::string> held_back;
  for (uint64_t seq : sequences) {
    ActiveRun work;
    Step step = Step::kNone;
    {
      MutexLock lock(&mutex_);
      auto it = active_.find(seq);
      if (it == active_.end()) continue;
      ActiveRun* run = it->second.get();
      if (run->busy) {
        if (run->state == JobRunState::kWaiting) held_back.insert(run->job);
        continue;
      }
      if (run->state == JobRunState::kWaiting && held_back.count(run->job)) continue;
      step = DecideStep(run);
      if (step == Step::kNone) continue;
      work = Acquire(run);
    }
    std::string thrown;
    try {
      Status st = ExecuteStep(step, &work);
      if (st.ok()) {
        work.consecutive_errors = 0;
      } else if (work.consecutive_errors++ % 100 == 0) {
        // Store errors are retried on the next tick, with the run as it was.
        OG_LOG(kError, "run " << work.run_id << ": " << st.message());
      }
    } catch (const std::exception& e) {
      thrown = e.what();
    } catch (...) {
      thrown = "unknown exception";
    }
    if (!thrown.empty())
      Abandon(&work, "OpenGlue ended the job run after an internal error while supervising it: " +
                         SanitizeUtf8(thrown));
    Release(work);
  }
}

}  // namespace openglue::jobs
