// Recovery after a restart: the runs left active are read back, their processes adopted or
// their runs finished; and which run a process uid belongs to.
#include "jobs/job_service_internal.h"

namespace openglue::jobs {

std::optional<std::string> JobService::RunCredentialOfUid(uid_t uid) const {
  std::vector<std::pair<int, std::string>> launched;  // pid, credential
  {
    MutexLock lock(&mutex_);
    for (const auto& [sequence, run] : active_)
      if (run->pid > 0 && !run->access_key.empty()) launched.emplace_back(run->pid, run->access_key);
  }
  for (const auto& [pid, access_key] : launched)
    if (launcher_->RunUid(pid) == uid) return access_key;
  return std::nullopt;
}

Status JobService::Recover() {
  // Only the runs left active are read, however long the history. The sequence counter is
  // restored first: finishing a run below may retry it as a new run, whose sequence must not be
  // one that a run further down still holds.
  OG_ASSIGN_OR_RETURN(auto txn, store_->BeginRead());
  OG_ASSIGN_OR_RETURN(auto last, txn->Get(kJobRunSequence, "last"));
  OG_ASSIGN_OR_RETURN(auto active, txn->Scan(kActiveJobRun, store::ScanOptions{"", "", -1, true}));
  std::vector<store::Row> rows;
  for (const auto& entry : active) {
    OG_ASSIGN_OR_RETURN(auto doc, txn->Get(kJobRun, entry.key));
    if (doc) rows.push_back({entry.key, std::move(*doc)});
  }
  txn.reset();
  uint64_t restored = 0;
  for (const auto& row : rows) restored = std::max(restored, SequenceOfKey(row.key));
  uint64_t stored = 0;
  if (last && ParseU64(*last, &stored)) restored = std::max(restored, stored);
  {
    MutexLock lock(&mutex_);
    next_sequence_ = std::max(next_sequence_, restored);
  }

  // Adopt every run that goes on first, so that retries of the runs finished below count them.
  struct Ending {
    ActiveRun run;
    Json doc;
    JobRunState state;
    std::string error;
  };
  std::vector<Ending> endings;
  std::vector<std::pair<store::Row, std::string>> unreadable;  // row, why
  std::vector<std::unique_ptr<ActiveRun>> adopted_runs;
  int adopted = 0, queued = 0;
  for (const auto& row : rows) {
    try {
      Json doc = ParseJson(row.doc);
      if (!doc.is_object()) {
        unreadable.emplace_back(row, "it is not a JSON object");
        continue;
      }
      std::string state_name = GetString(doc, "JobRunState");
      std::optional<JobRunState> state = ParseJobRunState(state_name);
      if (!state) {
        unreadable.emplace_back(row, "its state '" + SanitizeUtf8(state_name) + "' is unknown");
        continue;
      }
      if (!IsActive(*state)) continue;
      auto run = std::make_unique<ActiveRun>();
      run->key = row.key;
      run->job = GetString(doc, "JobName");
      run->run_id = GetString(doc, "Id");
      if (run->job.empty() || run->run_id.empty()) {
        unreadable.emplace_back(row, "it has no JobName or Id");
        continue;
      }
      run->sequence = SequenceOfKey(row.key);
      run->state = *state;
      run->timeout_minutes = GetInt(doc, "Timeout", 0);
      const Json& og = GetObject(doc, "_og");
      run->max_concurrent_runs = GetInt(og, "max_concurrent_runs", 1);
      run->pid = static_cast<int>(GetInt(og, "pid", 0));
      run->exit_code_path = GetString(og, "exit_code_path");
      run->started_ms = GetInt(og, "launched_ms", 0);
      run->access_key = GetString(og, "access_key");
      if (*state == JobRunState::kRunning || *state == JobRunState::kStopping) {
        ProcessStatus status = launcher_->Check(run->pid, run->exit_code_path);
        if (status.state == ProcessState::kRunning) {
          // The secret is derived again from the access key id (it was never stored).
          if (!run->access_key.empty() && credentials_.grant)
            (void)credentials_.grant(
                RunGrant{run->access_key, run->job, run->run_id, GetString(og, "role")});
          logs_->Follow(run->run_id);
          if (*state == JobRunState::kStopping) run->stop_requested_ms = clock_->NowMillis();
          ++adopted;
        } else if (status.state == ProcessState::kExited) {
          // It ended while the server was down: the next Tick finishes it from its exit code.
          logs_->Follow(run->run_id);
          ++adopted;
        } else {
          bool stopping = *state == JobRunState::kStopping;
          endings.push_back({*run, std::move(doc),
                             stopping ? JobRunState::kStopped : JobRunState::kFailed,
                             stopping ? "" :
                             "The server restarted and the job run's process was no longer "
                             "running; it ended without an exit status."});
          continue;
        }
      } else {
        ++queued;  // WAITING or STARTING: launched by Tick as slots allow
      }
      adopted_runs.push_back(std::move(run));
    } catch (const std::exception& e) {
      unreadable.emplace_back(row, std::string("reading it failed: ") + e.what());
    }
  }
  {
    MutexLock lock(&mutex_);
    for (auto& run : adopted_runs) {
      uint64_t sequence = run->sequence;
      active_[sequence] = std::move(run);
    }
  }
  for (Ending& ending : endings) {
    try {
      Status st = Finish(&ending.run, &ending.doc, ending.state, ending.error);
      if (!st.ok()) return st;  // the store itself fails: the server cannot start
    } catch (const std::exception& e) {
      OG_LOG(kError, "run " << ending.run.run_id << " could not be finished at restart: "
                            << SanitizeUtf8(e.what()));
    }
  }
  if (!unreadable.empty()) {
    // A damaged row ends its run in ERROR, found by its id as usual. The id is in the row when
    // it still parses, else in the id index (read in full only in this rare case).
    std::map<std::string, std::string> id_of_key;
    {
      OG_ASSIGN_OR_RETURN(auto read, store_->BeginRead());
      OG_ASSIGN_OR_RETURN(auto ids, read->Scan(kJobRunId, store::ScanOptions{}));
      for (auto& row : ids) id_of_key[row.doc] = row.key;
    }
    double now = clock_->NowSeconds();
    for (auto& [row, why] : unreadable) {
      Json old = ParseJson(row.doc);
      Json doc = old.is_object() ? old : Json::object();
      std::string job = row.key.substr(0, row.key.find(store::kKeySep));
      std::string id = id_of_key.count(row.key) ? id_of_key[row.key] : GetString(doc, "Id");
      doc["Id"] = id;
      doc["JobName"] = job;
      doc["JobRunState"] = StateName(JobRunState::kError);
      doc["LastModifiedOn"] = now;
      doc["CompletedOn"] = now;
      doc["ErrorMessage"] = TruncateUtf8("The stored record of this job run could not be read at "
                                         "server start (" + why + "); OpenGlue ended the run.",
                                         kMaxErrorMessageBytes);
      if (!doc.contains("_og") || !doc["_og"].is_object()) doc["_og"] = Json::object();
      if (!old.is_object()) doc["_og"]["unreadable_record"] = TruncateUtf8(row.doc, kMaxErrorMessageBytes);
      OG_LOG(kError, "job " << job << " run " << id << ": " << doc["ErrorMessage"].get<std::string>());
      OG_RETURN_NOT_OK(SaveRun(row.key, doc));
    }
  }
  OG_LOG(kInfo, "job runs recovered: " << adopted << " re-adopted, " << endings.size()
                                       << " finished, " << queued << " queued, "
                                       << unreadable.size() << " unreadable");
  return Status::OK();
}

}  // namespace openglue::jobs
