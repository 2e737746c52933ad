// The job definitions: CreateJob, UpdateJob, GetJob(s), ListJobs, BatchGetJobs, DeleteJob, and
// the job code a running run may not rewrite.
#include "jobs/job_service_internal.h"

namespace openglue::jobs {

Result<Json> JobService::CreateJob(const Json& request) {
  std::string name = GetString(request, "Name");
  double now = clock_->NowSeconds();
  OG_ASSIGN_OR_RETURN(Json job, JobFromInput(request, name, now, now));
  OG_ASSIGN_OR_RETURN(auto txn, store_->BeginWrite());
  Status st = txn->Insert(kJob, name, DumpJson(job));
  if (st.code() == StatusCode::kAlreadyExists)
    return Status::AlreadyExists("Job with name " + name + " already exists.");
  OG_RETURN_NOT_OK(st);
  if (request.contains("Tags") && !request["Tags"].empty())
    OG_RETURN_NOT_OK(resource::AddTags(txn.get(), JobArn(name), request["Tags"]));
  OG_RETURN_NOT_OK(txn->Commit());
  ProtectCodeInRunningRuns();
  return Json{{"Name", name}};
}

Result<Json> JobService::UpdateJob(const Json& request) {
  std::string name = GetString(request, "JobName");
  OG_ASSIGN_OR_RETURN(auto txn, store_->BeginWrite());
  OG_ASSIGN_OR_RETURN(auto doc, txn->Get(kJob, name));
  if (!doc) return Status::EntityNotFound("Job " + name + " not found.");
  // A damaged definition is replaced by the update; only its creation time is lost.
  Json old = ParseJson(*doc);
  double created_on = old.is_object() && old.contains("CreatedOn") && old["CreatedOn"].is_number()
                          ? old["CreatedOn"].get<double>() : clock_->NowSeconds();
  OG_ASSIGN_OR_RETURN(Json job, JobFromInput(GetObject(request, "JobUpdate"), name, created_on,
                                          clock_->NowSeconds()));
  OG_RETURN_NOT_OK(txn->Put(kJob, name, DumpJson(job)));
  OG_RETURN_NOT_OK(txn->Commit());
  ProtectCodeInRunningRuns();
  return Json{{"JobName", name}};
}

Result<Json> JobService::GetJob(const Json& request) {
  std::string name = GetString(request, "JobName");
  OG_ASSIGN_OR_RETURN(auto txn, store_->BeginRead());
  OG_ASSIGN_OR_RETURN(auto doc, txn->Get(kJob, name));
  if (!doc) return Status::EntityNotFound("Job " + name + " not found.");
  OG_ASSIGN_OR_RETURN(Json job, ParseStored(*doc, "job " + name));
  return Json{{"Job", std::move(job)}};
}

Result<std::map<std::string, std::string>> JobService::CodeObjects() const {
  OG_ASSIGN_OR_RETURN(auto txn, store_->BeginRead());
  OG_ASSIGN_OR_RETURN(std::vector<store::Row> rows, txn->Scan(kJob, store::ScanOptions{}));
  std::map<std::string, std::string> code;
  auto add = [&](const std::string& uri, const std::string& job) {
    Result<storage::Location> location = storage::ParseLocation(Trim(uri));
    if (location.ok() && location->scheme == storage::LocationScheme::kObject && !location->key.empty())
      code.emplace(location->bucket + "/" + location->key, job);
  };
  for (const store::Row& row : rows) {
    Result<Json> job = ParseStored(row.doc, "job " + row.key);
    if (!job.ok()) continue;
    std::string script = GetString(GetObject(*job, "Command"), "ScriptLocation");
    if (Trim(script).empty() && !GetObject(*job, "CodeGenConfigurationNodes").empty())
      script = DefaultScriptLocation(row.key);
    add(script, row.key);
    for (const char* member : {"DefaultArguments", "NonOverridableArguments"}) {
      for (const auto& [name, value] : GetObject(*job, member).items()) {
        std::string flag = StartsWith(name, "--") ? name : "--" + name;
        if (!value.is_string() ||
            (flag != "--extra-py-files" && flag != "--extra-files" && flag != "--extra-jars" &&
             flag != "--additional-python-modules"))
          continue;
        for (const std::string& entry : Split(value.get<std::string>(), ',')) add(entry, row.key);
      }
    }
  }
  return code;
}

void JobService::ProtectCodeInRunningRuns() {
  std::vector<int> pids;
  {
    MutexLock lock(&mutex_);
    for (const auto& [sequence, run] : active_)
      if (run->pid > 0) pids.push_back(run->pid);
  }
  if (pids.empty()) return;
  Result<std::map<std::string, std::string>> code = CodeObjects();
  if (!code.ok()) {
    OG_LOG(kError, "cannot protect jobs' code in running runs: " << code.status().message());
    return;
  }
  std::vector<std::string> pins = {store_folder_};
  std::vector<std::string> entries = CodePinArgs(*code);
  pins.insert(pins.end(), entries.begin(), entries.end());
  {
    // Runs launched since the last change got these pins at launch; the others have them.
    MutexLock lock(&pins_mutex_);
    if (pins == pins_applied_) return;
    pins_applied_ = pins;
  }
  for (int pid : pids) {
    Status protected_ = launcher_->ProtectCode(pid, pins);
    if (!protected_.ok()) OG_LOG(kError, protected_.message());
  }
}

Result<Json> JobService::GetJobs(const Json& request) {
  OG_ASSIGN_OR_RETURN(auto txn, store_->BeginRead());
  OG_ASSIGN_OR_RETURN(resource::Page page,
                   resource::ScanPage(txn.get(), kJob, "", request, resource::PageSize(request, 100),
                                     [](const store::Row&) -> Result<bool> { return true; }));
  Json jobs = Json::array();
  for (const auto& row : page.rows) {
    OG_ASSIGN_OR_RETURN(Json job, ParseStored(row.doc, "job " + row.key));
    jobs.push_back(std::move(job));
  }
  Json response{{"Jobs", std::move(jobs)}};
  if (!page.next_token.empty()) response["NextToken"] = page.next_token;
  return response;
}

Result<Json> JobService::ListJobs(const Json& request) {
  const Json wanted_tags = request.value("Tags", Json::object());
  OG_ASSIGN_OR_RETURN(auto txn, store_->BeginRead());
  auto tagged = [&](const store::Row& row) -> Result<bool> {
    return resource::HasTags(txn.get(), JobArn(row.key), wanted_tags);
  };
  return resource::ListNames(txn.get(), kJob, request, resource::PageSize(request, 100),
                             "JobNames", tagged);
}

Result<Json> JobService::BatchGetJobs(const Json& request) {
  OG_ASSIGN_OR_RETURN(auto txn, store_->BeginRead());
  Json jobs = Json::array(), missing = Json::array();
  for (const Json& name : request.at("JobNames")) {
    OG_ASSIGN_OR_RETURN(auto doc, txn->Get(kJob, name.get<std::string>()));
    if (doc) {
      OG_ASSIGN_OR_RETURN(Json job, ParseStored(*doc, "job " + name.get<std::string>()));
      jobs.push_back(std::move(job));
    } else {
      missing.push_back(name);
    }
  }
  return Json{{"Jobs", std::move(jobs)}, {"JobsNotFound", std::move(missing)}};
}

Result<Json> JobService::DeleteJob(const Json& request) {
  std::string name = GetString(request, "JobName");
  // Active runs of the job are stopped; finished runs stay readable with GetJobRun.
  std::vector<std::string> active_ids;
  {
    MutexLock lock(&mutex_);
    for (auto& [seq, run] : active_)
      if (run->job == name) active_ids.push_back(run->run_id);
  }
  if (!active_ids.empty()) {
    Json ids = Json::array();
    for (auto& id : active_ids) ids.push_back(id);
    OG_RETURN_NOT_OK(BatchStopJobRun(Json{{"JobName", name}, {"JobRunIds", ids}}).status());
  }
  OG_ASSIGN_OR_RETURN(auto txn, store_->BeginWrite());
  OG_RETURN_NOT_OK(txn->Delete(kJob, name).status());
  OG_RETURN_NOT_OK(txn->Delete(resource::kTags, JobArn(name)).status());
  if (options_.on_delete_job) OG_RETURN_NOT_OK(options_.on_delete_job(txn.get(), name));
  OG_RETURN_NOT_OK(txn->Commit());
  return Json{{"JobName", name}};
}

}  // namespace openglue::jobs
