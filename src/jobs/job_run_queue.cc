// The runs' store and queue: saving run documents, admitting new runs (PrepareRun, CommitRuns)
// and the active set's bookkeeping (Acquire, Release, the counts against the limits).
#include "jobs/job_service_internal.h"

namespace openglue::jobs {

Status JobService::SaveRun(const std::string& key, const Json& doc) {
  OG_ASSIGN_OR_RETURN(auto txn, store_->BeginWrite());
  OG_RETURN_NOT_OK(txn->Put(kJobRun, key, DumpJson(doc)));
  std::optional<JobRunState> state = ParseJobRunState(GetString(doc, "JobRunState"));
  bool final_state = state && IsFinal(*state);
  if (!final_state) {
    OG_RETURN_NOT_OK(txn->Put(kActiveJobRun, key, ""));
    return txn->Commit();
  }
  // Only the transition into a final state is told (a final run saved again is not).
  OG_ASSIGN_OR_RETURN(bool was_active, txn->Delete(kActiveJobRun, key));
  bool tell = was_active && options_.run_ended.record != nullptr;
  if (tell) {
    JobRunEnded ended;
    ended.run_id = GetString(doc, "Id");
    ended.job = GetString(doc, "JobName");
    ended.state = *state;
    ended.previous_run_id = GetString(doc, "PreviousRunId");
    ended.trigger_name = GetString(doc, "TriggerName");
    ended.retrying = *state == JobRunState::kFailed &&
                     GetInt(doc, "Attempt", 0) < GetInt(GetObject(doc, "_og"), "max_retries", 0);
    OG_RETURN_NOT_OK(options_.run_ended.record(txn.get(), ended));
  }
  OG_RETURN_NOT_OK(txn->Commit());
  if (tell && options_.run_ended.notify) options_.run_ended.notify();
  return Status::OK();
}

Result<Json> JobService::LoadRunOrRebuild(const ActiveRun& run, std::string* unreadable) {
  std::optional<std::string> text;
  {
    OG_ASSIGN_OR_RETURN(auto txn, store_->BeginRead());
    OG_ASSIGN_OR_RETURN(text, txn->Get(kJobRun, run.key));
  }
  Json doc = text ? ParseJson(*text) : Json();
  if (doc.is_object()) return doc;
  // The row is damaged (or gone): the run goes on from what memory holds, and says so.
  *unreadable = "The stored record of job run " + run.run_id +
                (text ? " could not be read (it is not a JSON object)" : " is missing") +
                "; OpenGlue ended the run.";
  double now = clock_->NowSeconds();
  Json rebuilt{{"Id", run.run_id},        {"JobName", run.job},         {"Attempt", 0},
               {"JobRunState", StateName(run.state)}, {"LastModifiedOn", now},
               {"Arguments", Json::object()}, {"PredecessorRuns", Json::array()},
               {"LogGroupName", "/aws-glue/jobs"}};
  rebuilt["_og"] = {{"access_key", run.access_key}, {"sequence", run.sequence}};
  if (text) rebuilt["_og"]["unreadable_record"] = TruncateUtf8(*text, kMaxErrorMessageBytes);
  return rebuilt;
}

std::string JobService::NewRandomHex(size_t digits) {
  MutexLock lock(&random_mutex_);
  return random_->FromAlphabet("0123456789abcdef", digits);
}

int JobService::ActiveCount(const std::string& job) const {
  int n = 0;
  for (auto& [seq, run] : active_)
    if (run->job == job && IsActive(run->state) && run->state != JobRunState::kWaiting) ++n;
  return n;
}

int JobService::LaunchedCount() const {
  int n = 0;
  for (auto& [seq, run] : active_)
    if (run->launching || run->state == JobRunState::kRunning ||
        run->state == JobRunState::kStopping)
      ++n;
  return n;
}

JobService::ActiveRun JobService::Acquire(ActiveRun* run) {
  run->busy = true;
  return *run;
}

void JobService::Release(const ActiveRun& work) {
  MutexLock lock(&mutex_);
  auto it = active_.find(work.sequence);
  if (it != active_.end()) {
    *it->second = work;
    it->second->busy = false;
    it->second->launching = false;
    if (!IsActive(work.state)) active_.erase(it);
  }
  released_.SignalAll();
}

Result<JobService::NewRun> JobService::PrepareRun(const Json& job, const Json& arguments,
                                                  const Json& request, int attempt,
                                                  const std::string& previous_run_id,
                                                  const std::string& given_run_id,
                                                  const std::string& trigger_name) {
  std::string job_name = GetString(job, "Name");
  int64_t max_runs = GetInt(GetObject(job, "ExecutionProperty"), "MaxConcurrentRuns", 1);
  bool queuing = GetBool(request, "JobRunQueuingEnabled", GetBool(job, "JobRunQueuingEnabled", false));
  int64_t timeout = GetInt(request, "Timeout", GetInt(job, "Timeout", kDefaultTimeoutMinutes));
  std::string run_id = given_run_id.empty() ? "jr_" + NewRandomHex(64) : given_run_id;

  // Decide under the lock: refused, queued or starting. The run is entered busy, so it counts
  // against the limits at once but nobody acts on it before its creation is committed.
  uint64_t sequence = 0;
  bool waiting = false;
  {
    MutexLock lock(&mutex_);
    int active = 0;
    for (auto& [seq, run] : active_)
      if (run->job == job_name && IsActive(run->state)) ++active;
    if (active >= max_runs) {
      if (!queuing)
        return Status(StatusCode::kConcurrentRunsExceeded,
                      "Concurrent runs exceeded for " + job_name + ": MaxConcurrentRuns is " +
                          std::to_string(max_runs));
      waiting = true;
    }
    sequence = ++next_sequence_;
    auto active_run = std::make_unique<ActiveRun>();
    active_run->key = RunKey(job_name, sequence);
    active_run->job = job_name;
    active_run->run_id = run_id;
    active_run->sequence = sequence;
    active_run->state = waiting ? JobRunState::kWaiting : JobRunState::kStarting;
    active_run->timeout_minutes = timeout;
    active_run->max_concurrent_runs = max_runs;
    active_run->busy = true;
    active_[sequence] = std::move(active_run);
  }

  // The document is built outside it.
  NewRun created{sequence, RunKey(job_name, sequence), run_id, job_name, Json::object(), waiting,
                 attempt};
  double now = clock_->NowSeconds();
  Json& run = created.doc;
  run["Id"] = run_id;
  run["Attempt"] = attempt;
  if (!previous_run_id.empty()) run["PreviousRunId"] = previous_run_id;
  if (!trigger_name.empty()) run["TriggerName"] = trigger_name;
  run["JobName"] = job_name;
  run["JobMode"] = GetString(job, "JobMode", "SCRIPT");
  run["JobRunQueuingEnabled"] = queuing;
  run["StartedOn"] = now;
  run["LastModifiedOn"] = now;
  run["JobRunState"] = StateName(waiting ? JobRunState::kWaiting : JobRunState::kStarting);
  run["Arguments"] = arguments;
  run["PredecessorRuns"] = Json::array();
  run["Timeout"] = timeout;
  for (const char* member : {"MaxCapacity", "WorkerType", "NumberOfWorkers", "AllocatedCapacity",
                             "SecurityConfiguration", "NotificationProperty", "ExecutionClass"}) {
    if (request.contains(member) && !request[member].is_null()) run[member] = request[member];
    else if (job.contains(member)) run[member] = job[member];
  }
  if (job.contains("GlueVersion")) run["GlueVersion"] = job["GlueVersion"];
  run["LogGroupName"] = "/aws-glue/jobs";
  run["ExecutionTime"] = 0;
  run["_og"] = {{"command", GetObject(job, "Command")},
                {"max_retries", GetInt(job, "MaxRetries", 0)},
                {"sequence", sequence}, {"max_concurrent_runs", max_runs},
                {"role", GetString(job, "Role")}};
  // A visual job's graph, as the run was started: a run with no script generates it from this.
  const Json& nodes = GetObject(job, "CodeGenConfigurationNodes");
  if (!nodes.empty()) run["_og"]["code_gen_nodes"] = nodes;
  return created;
}

Status JobService::CommitRuns(const std::vector<NewRun>& runs) {
  if (runs.empty()) return Status::OK();
  Status committed = [&]() -> Status {
    OG_ASSIGN_OR_RETURN(auto txn, store_->BeginWrite());
    uint64_t highest = 0;
    for (const NewRun& run : runs) {
      OG_RETURN_NOT_OK(txn->Put(kJobRun, run.key, DumpJson(run.doc)));
      OG_RETURN_NOT_OK(txn->Put(kJobRunId, run.run_id, run.key));
      OG_RETURN_NOT_OK(txn->Put(kActiveJobRun, run.key, ""));
      highest = std::max(highest, run.sequence);
    }
    // Creations commit in any order; the counter keeps the highest sequence handed out.
    OG_ASSIGN_OR_RETURN(auto last, txn->Get(kJobRunSequence, "last"));
    uint64_t stored = 0;
    if (!last || !ParseU64(*last, &stored) || stored < highest)
      OG_RETURN_NOT_OK(txn->Put(kJobRunSequence, "last", std::to_string(highest)));
    return txn->Commit();
  }();
  {
    MutexLock lock(&mutex_);
    for (const NewRun& run : runs) {
      auto it = active_.find(run.sequence);
      if (it == active_.end()) continue;
      if (!committed.ok()) active_.erase(it);
      else it->second->busy = false;
    }
    released_.SignalAll();
  }
  OG_RETURN_NOT_OK(committed);
  for (const NewRun& run : runs)
    OG_LOG(kInfo, "job " << run.job << " run " << run.run_id << " "
                         << StateName(run.waiting ? JobRunState::kWaiting : JobRunState::kStarting)
                         << " (attempt " << run.attempt << ")");
  return Status::OK();
}

Result<std::string> JobService::CreateRun(const Json& job, const Json& arguments,
                                          const Json& request, int attempt,
                                          const std::string& previous_run_id,
                                          const std::string& given_run_id,
                                          const std::string& trigger_name) {
  OG_ASSIGN_OR_RETURN(NewRun run, PrepareRun(job, arguments, request, attempt, previous_run_id,
                                             given_run_id, trigger_name));
  std::string run_id = run.run_id;
  OG_RETURN_NOT_OK(CommitRuns({std::move(run)}));
  return run_id;
}

}  // namespace openglue::jobs
