// The job-run operations: StartJobRun (and the triggers' runs), GetJobRun, GetJobRuns,
// BatchStopJobRun.
#include "jobs/job_service_internal.h"

namespace openglue::jobs {

Result<Json> JobService::StartJobRun(const Json& request) {
  std::string name = GetString(request, "JobName");
  OG_ASSIGN_OR_RETURN(auto txn, store_->BeginRead());
  OG_ASSIGN_OR_RETURN(auto doc, txn->Get(kJob, name));
  txn.reset();
  if (!doc) return Status::EntityNotFound("Job " + name + " not found.");
  OG_ASSIGN_OR_RETURN(Json job, ParseStored(*doc, "job " + name));
  if (request.contains("Timeout") && request["Timeout"].is_number() && GetInt(request, "Timeout", 1) < 1)
    return Status::InvalidInput("Timeout must be at least 1 minute");
  auto given = [&](const char* member) {
    return request.contains(member) && !request[member].is_null();
  };
  // AllocatedCapacity is the deprecated name of MaxCapacity: AWS refuses both at once.
  if (given("AllocatedCapacity") && given("MaxCapacity"))
    return Status::InvalidInput("Please set only Allocated Capacity or Max Capacity");
  Json arguments = MergeArguments(job, GetObject(request, "Arguments"));
  std::string previous = GetString(request, "JobRunId");
  OG_ASSIGN_OR_RETURN(std::string run_id, CreateRun(job, arguments, request, 0, previous));
  Kick();
  return Json{{"JobRunId", run_id}};
}

std::vector<Status> JobService::StartTriggeredRuns(const std::vector<TriggeredRun>& runs) {
  std::vector<Status> outcomes(runs.size());
  if (runs.empty()) return outcomes;
  // What exists already (runs started before a restart) and the jobs, in one read.
  std::map<std::string, Result<Json>> jobs;
  std::vector<bool> exists(runs.size(), false);
  {
    auto txn = store_->BeginRead();
    if (!txn.ok()) return std::vector<Status>(runs.size(), txn.status());
    for (size_t i = 0; i < runs.size(); ++i) {
      auto existing = (*txn)->Get(kJobRunId, runs[i].run_id);
      if (!existing.ok()) {
        outcomes[i] = existing.status();
        continue;
      }
      exists[i] = existing->has_value();
      std::string name = GetString(runs[i].request, "JobName");
      if (exists[i] || jobs.count(name)) continue;
      auto doc = (*txn)->Get(kJob, name);
      if (!doc.ok()) jobs.emplace(name, doc.status());
      else if (!doc->has_value()) jobs.emplace(name, Status::EntityNotFound("Job " + name + " not found."));
      else jobs.emplace(name, ParseStored(**doc, "job " + name));
    }
  }
  std::vector<NewRun> prepared;
  std::vector<size_t> prepared_index;
  for (size_t i = 0; i < runs.size(); ++i) {
    if (!outcomes[i].ok() || exists[i]) continue;
    const Result<Json>& job = jobs.at(GetString(runs[i].request, "JobName"));
    if (!job.ok()) {
      outcomes[i] = job.status();
      continue;
    }
    Json arguments = MergeArguments(*job, GetObject(runs[i].request, "Arguments"));
    Result<NewRun> run = PrepareRun(*job, arguments, runs[i].request, 0, "", runs[i].run_id,
                                    runs[i].trigger_name);
    if (!run.ok()) {
      outcomes[i] = run.status();
      continue;
    }
    prepared.push_back(std::move(*run));
    prepared_index.push_back(i);
  }
  // Every new run in one transaction.
  Status committed = CommitRuns(prepared);
  if (!committed.ok())
    for (size_t i : prepared_index) outcomes[i] = committed;
  Kick();
  return outcomes;
}

Status JobService::StartModuleRun(const ModuleRun& module_run) {
  if (module_run.owner.empty() || module_run.run_id.empty() || module_run.module.empty())
    return Status::InvalidInput("a module run needs an owner, a run id and a module");
  if (module_run.timeout_minutes < 1) return Status::InvalidInput("Timeout must be at least 1 minute");
  {
    OG_ASSIGN_OR_RETURN(auto txn, store_->BeginRead());
    OG_ASSIGN_OR_RETURN(auto existing, txn->Get(kJobRunId, module_run.run_id));
    if (existing) return Status::AlreadyExists("Run " + module_run.run_id + " exists already.");
  }
  // The run stands on a job of its own that is never stored: as many concurrent runs as the
  // server-wide limit allows, queued (WAITING) beyond it, never retried.
  Json job{{"Name", module_run.owner},
           {"Role", module_run.role},
           {"Command", {{"Name", "glueetl"}}},
           {"ExecutionProperty", {{"MaxConcurrentRuns", 1000000}}},
           {"JobRunQueuingEnabled", true}};
  Json request{{"JobName", module_run.owner}, {"Timeout", module_run.timeout_minutes}};
  OG_ASSIGN_OR_RETURN(NewRun run, PrepareRun(job, Json::object(), request, 0, "", module_run.run_id, ""));
  run.doc["_og"]["module"] = module_run.module;
  run.doc["_og"]["module_spec"] = module_run.spec;
  OG_RETURN_NOT_OK(CommitRuns({std::move(run)}));
  Kick();
  return Status::OK();
}

Status JobService::StartTriggeredRun(const Json& request, const std::string& run_id,
                                     const std::string& trigger_name) {
  return StartTriggeredRuns({TriggeredRun{request, run_id, trigger_name}}).front();
}

Result<Json> JobService::GetJobRun(const Json& request) {
  std::string name = GetString(request, "JobName");
  std::string run_id = GetString(request, "RunId");
  OG_ASSIGN_OR_RETURN(auto txn, store_->BeginRead());
  OG_ASSIGN_OR_RETURN(auto key, txn->Get(kJobRunId, run_id));
  if (!key) return Status::EntityNotFound("Job run " + run_id + " not found.");
  OG_ASSIGN_OR_RETURN(auto doc, txn->Get(kJobRun, *key));
  if (!doc) return Status::EntityNotFound("Job run " + run_id + " not found.");
  OG_ASSIGN_OR_RETURN(Json run, ParseStored(*doc, "job run " + run_id));
  if (GetString(run, "JobName") != name)
    return Status::EntityNotFound("Job run " + run_id + " not found for job " + name + ".");
  return Json{{"JobRun", Present(std::move(run))}};
}

Result<Json> JobService::GetJobRuns(const Json& request) {
  std::string name = GetString(request, "JobName");
  OG_ASSIGN_OR_RETURN(auto txn, store_->BeginRead());
  OG_ASSIGN_OR_RETURN(auto job, txn->Get(kJob, name));
  // Runs are keyed newest first under their job's name.
  OG_ASSIGN_OR_RETURN(resource::Page page,
                   resource::ScanPage(txn.get(), kJobRun, store::PrefixOf({name}), request,
                                     resource::PageSize(request, 100),
                                     [](const store::Row&) -> Result<bool> { return true; }));
  // A deleted job keeps its run history; only a job that never ran is unknown.
  if (!job && page.rows.empty() && GetString(request, "NextToken").empty())
    return Status::EntityNotFound("Job " + name + " not found.");
  Json runs = Json::array();
  for (const auto& row : page.rows) {
    OG_ASSIGN_OR_RETURN(Json run, ParseStored(row.doc, "a job run of " + name));
    runs.push_back(Present(std::move(run)));
  }
  Json response{{"JobRuns", std::move(runs)}};
  if (!page.next_token.empty()) response["NextToken"] = page.next_token;
  return response;
}

Result<Json> JobService::BatchStopJobRun(const Json& request) {
  std::string name = GetString(request, "JobName");
  Json ok = Json::array(), errors = Json::array();
  const Json ids = request.contains("JobRunIds") && request["JobRunIds"].is_array()
                       ? request["JobRunIds"] : Json::array();
  for (const Json& id_json : ids) {
    std::string run_id = id_json.is_string() ? id_json.get<std::string>() : "";
    auto fail = [&](StatusCode code, const std::string& message) {
      errors.push_back({{"JobName", name}, {"JobRunId", run_id},
                        {"ErrorDetail", {{"ErrorCode", GlueErrorName(code)}, {"ErrorMessage", message}}}});
    };
    // Decide under the lock (waiting while another thread's I/O holds the run), act outside.
    enum class Action { kUnknown, kAlreadyStopping, kFinishStopped, kSignal } action = Action::kUnknown;
    ActiveRun work;
    {
      MutexLock lock(&mutex_);
      ActiveRun* run = nullptr;
      for (;;) {
        run = nullptr;
        for (auto& [seq, r] : active_)
          if (r->run_id == run_id && r->job == name) run = r.get();
        if (run == nullptr || !run->busy) break;
        released_.Wait(&mutex_);
      }
      if (run != nullptr) {
        if (run->state == JobRunState::kWaiting || run->state == JobRunState::kStarting) {
          action = Action::kFinishStopped;  // never launched: stopped at once
          work = Acquire(run);
        } else if (run->state == JobRunState::kRunning) {
          action = Action::kSignal;
          run->state = JobRunState::kStopping;
          run->stop_requested_ms = clock_->NowMillis();
          work = Acquire(run);
        } else {
          action = Action::kAlreadyStopping;
        }
      }
    }
    if (action == Action::kUnknown) {
      // Finished or unknown.
      auto txn = store_->BeginRead();
      bool known = false;
      if (txn.ok()) {
        auto key = (*txn)->Get(kJobRunId, run_id);
        known = key.ok() && key->has_value();
      }
      if (known) fail(StatusCode::kInvalidInput,
                      "Job run " + run_id + " has already finished and cannot be stopped.");
      else fail(StatusCode::kEntityNotFound, "Job run " + run_id + " not found.");
      continue;
    }
    Status st;
    if (action != Action::kAlreadyStopping) {
      try {
        std::string unreadable;
        Result<Json> doc = LoadRunOrRebuild(work, &unreadable);
        if (!doc.ok()) {
          st = doc.status();
        } else if (action == Action::kFinishStopped) {
          st = Finish(&work, &*doc, JobRunState::kStopped, unreadable);
        } else {
          (*doc)["JobRunState"] = StateName(JobRunState::kStopping);
          (*doc)["LastModifiedOn"] = clock_->NowSeconds();
          st = SaveRun(work.key, *doc);
          if (work.pid > 0) (void)launcher_->SignalGroup(work.pid, SIGTERM);
        }
      } catch (const std::exception& e) {
        st = Status::Internal(std::string("stopping job run ") + run_id + ": " + e.what());
      }
      Release(work);
    }
    OG_RETURN_NOT_OK(st);
    ok.push_back({{"JobName", name}, {"JobRunId", run_id}});
  }
  Kick();
  return Json{{"SuccessfulSubmissions", std::move(ok)}, {"Errors", std::move(errors)}};
}

}  // namespace openglue::jobs
