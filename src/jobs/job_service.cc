#include "jobs/job_service.h"

#include <fcntl.h>
#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <random>

#include "resource/paging.h"
#include "resource/request.h"
#include "resource/tags.h"
#include "common/logging.h"
#include "common/strings.h"
#include "storage/local_object_store.h"
#include "storage/location.h"

namespace openglue::jobs {
namespace {

constexpr std::string_view kJob = "job";
constexpr std::string_view kJobRun = "job_run";        // job \x1f inverted sequence -> JobRun
constexpr std::string_view kJobRunId = "job_run_id";   // run id -> job_run key
// The runs not yet final (job_run keys, empty documents), so a restart reads only those.
constexpr std::string_view kActiveJobRun = "job_run_active";
// The last run sequence number handed out, so numbering survives restarts.
constexpr std::string_view kJobRunSequence = "job_run_sequence";
constexpr uint64_t kSequenceBase = 1000000000000000ULL;  // keys sort newest first
constexpr int kDefaultTimeoutMinutes = 2880;

const std::vector<std::string>& SupportedCommands() {
  static const std::vector<std::string> kCommands = {"glueetl", "pythonshell"};
  return kCommands;
}

using resource::GetString;

// The last '/'-separated part of a path or URI, when it is a plain file name (not "", "." or
// ".."); else `fallback`. Names the copy of an object in the run's folder.
std::string SafeFileName(const std::string& uri, const std::string& fallback) {
  size_t slash = uri.find_last_of('/');
  std::string name = slash == std::string::npos ? uri : uri.substr(slash + 1);
  if (name.empty() || name == "." || name == ".." || name.size() > 200) return fallback;
  return name;
}

std::string RandomHex(size_t digits) {
  static thread_local std::mt19937_64 rng(std::random_device{}());
  static const char* kHex = "0123456789abcdef";
  std::string out;
  for (size_t i = 0; i < digits; ++i) out.push_back(kHex[rng() & 15]);
  return out;
}

std::string RunKey(const std::string& job, uint64_t sequence) {
  std::string inverted = std::to_string(kSequenceBase - sequence);
  return store::MakeKey({job, std::string(16 - std::min<size_t>(16, inverted.size()), '0') + inverted});
}

uint64_t SequenceOfKey(const std::string& key) {
  size_t sep = key.rfind(store::kKeySep);
  try {
    return kSequenceBase - std::stoull(key.substr(sep + 1));
  } catch (const std::exception&) {
    return 0;
  }
}

bool IsActiveState(const std::string& state) {
  // SUCCEEDED, FAILED, TIMEOUT, STOPPED and ERROR are final.
  return state == "STARTING" || state == "RUNNING" || state == "STOPPING" || state == "WAITING";
}

// The public JobRun: internal bookkeeping stripped.
Json Present(Json run) {
  run.erase("_og");
  return run;
}

Json MergeArguments(const Json& job, const Json& run_arguments) {
  Json merged = job.value("DefaultArguments", Json::object());
  if (run_arguments.is_object())
    for (auto& [k, v] : run_arguments.items()) merged[k] = v;
  const Json fixed = job.value("NonOverridableArguments", Json::object());
  for (auto& [k, v] : fixed.items()) merged[k] = v;
  return merged;
}

// The Job document from a CreateJob request or a JobUpdate.
Result<Json> JobFromInput(const Json& input, const std::string& name, double created_on,
                          double now) {
  const Json& command = input.value("Command", Json::object());
  std::string command_name = GetString(command, "Name", "glueetl");
  const auto& supported = SupportedCommands();
  if (std::find(supported.begin(), supported.end(), command_name) == supported.end())
    return Status::InvalidInput("Command.Name '" + command_name +
                                "' is not supported; OpenGlue runs " + Join(supported, " and ") +
                                " jobs");
  if (GetString(command, "ScriptLocation").empty())
    return Status::InvalidInput("Command.ScriptLocation is required");
  Json job = Json::object();
  job["Name"] = name;
  for (const char* member :
       {"JobMode", "JobRunQueuingEnabled", "Description", "LogUri", "Role", "ExecutionProperty",
        "Command", "DefaultArguments", "NonOverridableArguments", "Connections", "MaxRetries",
        "AllocatedCapacity", "Timeout", "MaxCapacity", "WorkerType", "NumberOfWorkers",
        "SecurityConfiguration", "NotificationProperty", "GlueVersion", "ExecutionClass",
        "MaintenanceWindow", "SourceControlDetails"}) {
    if (input.contains(member) && !input[member].is_null()) job[member] = input[member];
  }
  job["Command"]["Name"] = command_name;
  if (!job.contains("ExecutionProperty")) job["ExecutionProperty"] = Json::object();
  if (!job["ExecutionProperty"].contains("MaxConcurrentRuns")) job["ExecutionProperty"]["MaxConcurrentRuns"] = 1;
  if (job["ExecutionProperty"]["MaxConcurrentRuns"].get<int64_t>() < 1)
    return Status::InvalidInput("ExecutionProperty.MaxConcurrentRuns must be at least 1");
  if (!job.contains("MaxRetries")) job["MaxRetries"] = 0;
  if (!job.contains("Timeout")) job["Timeout"] = kDefaultTimeoutMinutes;
  if (!job.contains("DefaultArguments")) job["DefaultArguments"] = Json::object();
  if (!job.contains("MaxCapacity") && !job.contains("WorkerType"))
    job["MaxCapacity"] = command_name == "pythonshell" ? 0.0625 : 10.0;
  if (!job.contains("JobMode")) job["JobMode"] = "SCRIPT";
  job["CreatedOn"] = created_on;
  job["LastModifiedOn"] = now;
  return job;
}

// The last "Type: message" line of a Python traceback in `stderr_path`, else its last line.
std::string ErrorFromStderr(const std::string& stderr_path) {
  std::ifstream in(stderr_path, std::ios::binary);
  if (!in) return "";
  in.seekg(0, std::ios::end);
  std::streamoff size = in.tellg();
  std::streamoff start = std::max<std::streamoff>(0, size - 65536);
  in.seekg(start);
  std::string tail((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  std::vector<std::string> lines = Split(tail, '\n');
  bool traceback = tail.find("Traceback (most recent call last)") != std::string::npos;
  for (auto it = lines.rbegin(); it != lines.rend(); ++it) {
    std::string line = Trim(*it);
    if (line.empty()) continue;
    if (!traceback) return line.substr(0, 2048);
    // Traceback lines are indented; the exception line is not.
    if (!it->empty() && (*it)[0] != ' ') return line.substr(0, 2048);
  }
  return "";
}

}  // namespace

struct JobService::ActiveRun {
  std::string key;      // store key
  std::string job;
  std::string run_id;
  uint64_t sequence = 0;
  std::string state;
  int pid = 0;
  std::string exit_code_path;
  int64_t started_ms = 0;       // when the process was launched
  int64_t timeout_minutes = 0;
  int64_t max_concurrent_runs = 1;  // the job's ExecutionProperty.MaxConcurrentRuns
  int64_t stop_requested_ms = 0;
  bool killed_for_timeout = false;
  bool sigkill_sent = false;
};

Status JobExists(store::Transaction* txn, const std::vector<std::string>& resource) {
  if (resource.size() == 2) {
    OG_ASSIGN_OR_RETURN(auto doc, txn->Get(kJob, resource[1]));
    if (doc) return Status::OK();
  }
  return Status::EntityNotFound("Job " + (resource.size() > 1 ? resource[1] : std::string()) +
                                " not found.");
}

JobService::JobService(store::MetadataStore* store, const Clock* clock, ProcessLauncher* launcher,
                       RunOutput* logs, RunCredentials credentials, JobServiceOptions options)
    : store_(store), clock_(clock), launcher_(launcher), logs_(logs),
      credentials_(std::move(credentials)), options_(std::move(options)) {}

JobService::~JobService() { Stop(); }

Result<std::unique_ptr<JobService>> JobService::Make(store::MetadataStore* store, const Clock* clock,
                                                     ProcessLauncher* launcher, RunOutput* logs,
                                                     RunCredentials credentials,
                                                     JobServiceOptions options) {
  if (!store || !clock || !launcher || !logs) return Status::Internal("JobService needs its parts");
  std::error_code ec;
  std::filesystem::create_directories(options.data_dir + "/runs", ec);
  if (ec) return Status::InvalidInput("cannot create " + options.data_dir + "/runs: " + ec.message());
  std::unique_ptr<JobService> service(
      new JobService(store, clock, launcher, logs, std::move(credentials), std::move(options)));
  service->objects_ = service->options_.objects;
  if (!service->objects_) {
    OG_ASSIGN_OR_RETURN(service->own_objects_,
                        storage::LocalObjectStore::Make({service->options_.data_dir + "/s3"}));
    service->objects_ = service->own_objects_.get();
  }
  return service;
}

const std::vector<std::pair<std::string, JobService::Operation>>& JobService::Operations() {
  static const std::vector<std::pair<std::string, Operation>> kOperations = {
      {"CreateJob", &JobService::CreateJob},       {"UpdateJob", &JobService::UpdateJob},
      {"GetJob", &JobService::GetJob},             {"GetJobs", &JobService::GetJobs},
      {"ListJobs", &JobService::ListJobs},         {"BatchGetJobs", &JobService::BatchGetJobs},
      {"DeleteJob", &JobService::DeleteJob},       {"StartJobRun", &JobService::StartJobRun},
      {"GetJobRun", &JobService::GetJobRun},       {"GetJobRuns", &JobService::GetJobRuns},
      {"BatchStopJobRun", &JobService::BatchStopJobRun},
  };
  return kOperations;
}

Result<std::string> JobService::LocalPath(const std::string& uri,
                                          const std::string& copy_to) const {
  OG_ASSIGN_OR_RETURN(storage::Location location, storage::ParseLocation(uri));
  if (location.scheme == storage::LocationScheme::kLocalFile) return location.path;
  if (location.key.empty() || location.key.back() == '/')
    return Status::InvalidInput(uri + " names a folder; give the path of a file");
  // Never the server's own path arithmetic: the store decides what a key is and refuses
  // whatever would leave it ("..", links, absolute keys).
  OG_ASSIGN_OR_RETURN(std::string data, objects_->ReadAll(location.bucket, location.key));
  std::error_code ec;
  std::filesystem::create_directories(std::filesystem::path(copy_to).parent_path(), ec);
  int fd = ::open(copy_to.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0644);
  if (fd < 0) return Status::Internal("cannot create " + copy_to + ": " + std::strerror(errno));
  size_t done = 0;
  while (done < data.size()) {
    ssize_t n = ::write(fd, data.data() + done, data.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      int err = errno;
      ::close(fd);
      return Status::Internal("cannot write " + copy_to + ": " + std::strerror(err));
    }
    done += static_cast<size_t>(n);
  }
  ::close(fd);
  return copy_to;
}

std::string JobService::JobArn(const std::string& name) const {
  return "arn:aws:glue:" + options_.region + ":" + options_.account_id + ":job/" + name;
}

std::string JobService::RunDir(const std::string& run_id) const {
  return options_.data_dir + "/runs/" + run_id;
}

// ---------------------------------------------------------------------------------------------
// Job definitions

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
  return Json{{"Name", name}};
}

Result<Json> JobService::UpdateJob(const Json& request) {
  std::string name = GetString(request, "JobName");
  OG_ASSIGN_OR_RETURN(auto txn, store_->BeginWrite());
  OG_ASSIGN_OR_RETURN(auto doc, txn->Get(kJob, name));
  if (!doc) return Status::EntityNotFound("Job " + name + " not found.");
  Json old = Json::parse(*doc);
  OG_ASSIGN_OR_RETURN(Json job, JobFromInput(request.at("JobUpdate"), name,
                                          old.value("CreatedOn", 0.0), clock_->NowSeconds()));
  OG_RETURN_NOT_OK(txn->Put(kJob, name, DumpJson(job)));
  OG_RETURN_NOT_OK(txn->Commit());
  return Json{{"JobName", name}};
}

Result<Json> JobService::GetJob(const Json& request) {
  std::string name = GetString(request, "JobName");
  OG_ASSIGN_OR_RETURN(auto txn, store_->BeginRead());
  OG_ASSIGN_OR_RETURN(auto doc, txn->Get(kJob, name));
  if (!doc) return Status::EntityNotFound("Job " + name + " not found.");
  return Json{{"Job", Json::parse(*doc)}};
}

Result<Json> JobService::GetJobs(const Json& request) {
  OG_ASSIGN_OR_RETURN(auto txn, store_->BeginRead());
  OG_ASSIGN_OR_RETURN(resource::Page page,
                   resource::ScanPage(txn.get(), kJob, "", request, resource::PageSize(request, 100),
                                     [](const store::Row&) -> Result<bool> { return true; }));
  Json jobs = Json::array();
  for (const auto& row : page.rows) jobs.push_back(Json::parse(row.doc));
  Json response{{"Jobs", std::move(jobs)}};
  if (!page.next_token.empty()) response["NextToken"] = page.next_token;
  return response;
}

Result<Json> JobService::ListJobs(const Json& request) {
  const Json wanted_tags = request.value("Tags", Json::object());
  OG_ASSIGN_OR_RETURN(auto txn, store_->BeginRead());
  auto tagged = [&](const store::Row& row) -> Result<bool> {
    if (wanted_tags.empty()) return true;
    OG_ASSIGN_OR_RETURN(auto tags_doc, txn->Get(resource::kTags, JobArn(row.key)));
    Json tags = tags_doc ? Json::parse(*tags_doc) : Json::object();
    for (auto& [k, v] : wanted_tags.items())
      if (!tags.contains(k) || tags[k] != v) return false;
    return true;
  };
  OG_ASSIGN_OR_RETURN(resource::Page page, resource::ScanPage(txn.get(), kJob, "", request,
                                                         resource::PageSize(request, 100), tagged));
  Json names = Json::array();
  for (const auto& row : page.rows) names.push_back(row.key);
  Json response{{"JobNames", std::move(names)}};
  if (!page.next_token.empty()) response["NextToken"] = page.next_token;
  return response;
}

Result<Json> JobService::BatchGetJobs(const Json& request) {
  OG_ASSIGN_OR_RETURN(auto txn, store_->BeginRead());
  Json jobs = Json::array(), missing = Json::array();
  for (const Json& name : request.at("JobNames")) {
    OG_ASSIGN_OR_RETURN(auto doc, txn->Get(kJob, name.get<std::string>()));
    if (doc) jobs.push_back(Json::parse(*doc));
    else missing.push_back(name);
  }
  return Json{{"Jobs", std::move(jobs)}, {"JobsNotFound", std::move(missing)}};
}

Result<Json> JobService::DeleteJob(const Json& request) {
  std::string name = GetString(request, "JobName");
  // Active runs of the job are stopped; finished runs stay readable with GetJobRun.
  std::vector<std::string> active_ids;
  {
    std::lock_guard<std::mutex> lock(mutex_);
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
  OG_RETURN_NOT_OK(txn->Commit());
  return Json{{"JobName", name}};
}

// ---------------------------------------------------------------------------------------------
// Runs

Status JobService::SaveRun(const std::string& key, const Json& doc) {
  OG_ASSIGN_OR_RETURN(auto txn, store_->BeginWrite());
  OG_RETURN_NOT_OK(txn->Put(kJobRun, key, DumpJson(doc)));
  if (IsActiveState(GetString(doc, "JobRunState"))) OG_RETURN_NOT_OK(txn->Put(kActiveJobRun, key, ""));
  else OG_RETURN_NOT_OK(txn->Delete(kActiveJobRun, key).status());
  return txn->Commit();
}

Result<Json> JobService::LoadRun(const std::string& key) {
  OG_ASSIGN_OR_RETURN(auto txn, store_->BeginRead());
  OG_ASSIGN_OR_RETURN(auto doc, txn->Get(kJobRun, key));
  if (!doc) return Status::EntityNotFound("Job run not found.");
  return Json::parse(*doc);
}

int JobService::ActiveCount(const std::string& job) const {
  int n = 0;
  for (auto& [seq, run] : active_)
    if (run->job == job && IsActiveState(run->state) && run->state != "WAITING") ++n;
  return n;
}

int JobService::LaunchedCount() const {
  int n = 0;
  for (auto& [seq, run] : active_)
    if (run->state == "RUNNING" || run->state == "STOPPING") ++n;
  return n;
}

Result<std::string> JobService::CreateRun(const Json& job, const Json& arguments,
                                          const Json& request, int attempt,
                                          const std::string& previous_run_id) {
  // REQUIRES(mutex_)
  std::string job_name = job["Name"];
  int64_t max_runs = job["ExecutionProperty"].value("MaxConcurrentRuns", int64_t{1});
  bool queuing = request.value("JobRunQueuingEnabled", job.value("JobRunQueuingEnabled", false));
  int active = 0;
  for (auto& [seq, run] : active_)
    if (run->job == job_name && IsActiveState(run->state)) ++active;
  bool waiting = false;
  if (active >= max_runs) {
    if (!queuing)
      return Status(StatusCode::kConcurrentRunsExceeded,
                    "Concurrent runs exceeded for " + job_name + ": MaxConcurrentRuns is " +
                        std::to_string(max_runs));
    waiting = true;
  }
  uint64_t sequence = ++next_sequence_;
  std::string run_id = "jr_" + RandomHex(64);
  std::string key = RunKey(job_name, sequence);
  double now = clock_->NowSeconds();
  Json run = Json::object();
  run["Id"] = run_id;
  run["Attempt"] = attempt;
  if (!previous_run_id.empty()) run["PreviousRunId"] = previous_run_id;
  run["JobName"] = job_name;
  run["JobMode"] = job.value("JobMode", "SCRIPT");
  run["JobRunQueuingEnabled"] = queuing;
  run["StartedOn"] = now;
  run["LastModifiedOn"] = now;
  run["JobRunState"] = waiting ? "WAITING" : "STARTING";
  run["Arguments"] = arguments;
  run["PredecessorRuns"] = Json::array();
  int64_t timeout = request.value("Timeout", job.value("Timeout", int64_t{kDefaultTimeoutMinutes}));
  run["Timeout"] = timeout;
  for (const char* member : {"MaxCapacity", "WorkerType", "NumberOfWorkers", "AllocatedCapacity",
                             "SecurityConfiguration", "NotificationProperty", "ExecutionClass"}) {
    if (request.contains(member)) run[member] = request[member];
    else if (job.contains(member)) run[member] = job[member];
  }
  if (job.contains("GlueVersion")) run["GlueVersion"] = job["GlueVersion"];
  run["LogGroupName"] = "/aws-glue/jobs";
  run["ExecutionTime"] = 0;
  run["_og"] = {{"command", job["Command"]}, {"max_retries", job.value("MaxRetries", int64_t{0})},
                {"sequence", sequence}, {"max_concurrent_runs", max_runs},
                {"role", job.value("Role", "")}};
  {
    OG_ASSIGN_OR_RETURN(auto txn, store_->BeginWrite());
    OG_RETURN_NOT_OK(txn->Put(kJobRun, key, DumpJson(run)));
    OG_RETURN_NOT_OK(txn->Put(kJobRunId, run_id, key));
    OG_RETURN_NOT_OK(txn->Put(kActiveJobRun, key, ""));
    OG_RETURN_NOT_OK(txn->Put(kJobRunSequence, "last", std::to_string(sequence)));
    OG_RETURN_NOT_OK(txn->Commit());
  }
  auto active_run = std::make_unique<ActiveRun>();
  active_run->key = key;
  active_run->job = job_name;
  active_run->run_id = run_id;
  active_run->sequence = sequence;
  active_run->state = run["JobRunState"];
  active_run->timeout_minutes = timeout;
  active_run->max_concurrent_runs = max_runs;
  active_[sequence] = std::move(active_run);
  OG_LOG(kInfo, "job " << job_name << " run " << run_id << " " << run["JobRunState"].get<std::string>()
                       << " (attempt " << attempt << ")");
  return run_id;
}

Result<Json> JobService::StartJobRun(const Json& request) {
  std::string name = GetString(request, "JobName");
  OG_ASSIGN_OR_RETURN(auto txn, store_->BeginRead());
  OG_ASSIGN_OR_RETURN(auto doc, txn->Get(kJob, name));
  txn.reset();
  if (!doc) return Status::EntityNotFound("Job " + name + " not found.");
  Json job = Json::parse(*doc);
  if (request.contains("Timeout") && request["Timeout"].get<int64_t>() < 1)
    return Status::InvalidInput("Timeout must be at least 1 minute");
  Json arguments = MergeArguments(job, request.value("Arguments", Json::object()));
  std::string previous = GetString(request, "JobRunId");
  std::string run_id;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    OG_ASSIGN_OR_RETURN(run_id, CreateRun(job, arguments, request, 0, previous));
  }
  Kick();
  return Json{{"JobRunId", run_id}};
}

Result<Json> JobService::GetJobRun(const Json& request) {
  std::string name = GetString(request, "JobName");
  std::string run_id = GetString(request, "RunId");
  OG_ASSIGN_OR_RETURN(auto txn, store_->BeginRead());
  OG_ASSIGN_OR_RETURN(auto key, txn->Get(kJobRunId, run_id));
  if (!key) return Status::EntityNotFound("Job run " + run_id + " not found.");
  OG_ASSIGN_OR_RETURN(auto doc, txn->Get(kJobRun, *key));
  if (!doc) return Status::EntityNotFound("Job run " + run_id + " not found.");
  Json run = Json::parse(*doc);
  if (run["JobName"] != name)
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
  for (const auto& row : page.rows) runs.push_back(Present(Json::parse(row.doc)));
  Json response{{"JobRuns", std::move(runs)}};
  if (!page.next_token.empty()) response["NextToken"] = page.next_token;
  return response;
}

Result<Json> JobService::BatchStopJobRun(const Json& request) {
  std::string name = GetString(request, "JobName");
  Json ok = Json::array(), errors = Json::array();
  std::lock_guard<std::mutex> lock(mutex_);
  for (const Json& id_json : request.at("JobRunIds")) {
    std::string run_id = id_json.get<std::string>();
    ActiveRun* run = nullptr;
    for (auto& [seq, r] : active_)
      if (r->run_id == run_id && r->job == name) run = r.get();
    auto fail = [&](StatusCode code, const std::string& message) {
      errors.push_back({{"JobName", name}, {"JobRunId", run_id},
                        {"ErrorDetail", {{"ErrorCode", GlueErrorName(code)}, {"ErrorMessage", message}}}});
    };
    if (run == nullptr) {
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
    OG_ASSIGN_OR_RETURN(Json doc, LoadRun(run->key));
    if (run->state == "WAITING" || run->state == "STARTING") {
      // Never launched: stopped at once.
      OG_RETURN_NOT_OK(Finish(run, &doc, "STOPPED", ""));
      active_.erase(run->sequence);
    } else if (run->state == "RUNNING") {
      run->state = "STOPPING";
      run->stop_requested_ms = clock_->NowMillis();
      doc["JobRunState"] = "STOPPING";
      doc["LastModifiedOn"] = clock_->NowSeconds();
      OG_RETURN_NOT_OK(SaveRun(run->key, doc));
      if (run->pid > 0) (void)launcher_->SignalGroup(run->pid, SIGTERM);
    }
    ok.push_back({{"JobName", name}, {"JobRunId", run_id}});
  }
  Kick();
  return Json{{"SuccessfulSubmissions", std::move(ok)}, {"Errors", std::move(errors)}};
}

// ---------------------------------------------------------------------------------------------
// The state machine

Status JobService::Launch(ActiveRun* run, Json* doc) {
  const Json& og = (*doc)["_og"];
  const Json& command = og["command"];
  std::string script = GetString(command, "ScriptLocation");
  std::string dir = RunDir(run->run_id);
  std::error_code ec;
  std::filesystem::create_directories(dir + "/work", ec);
  std::filesystem::create_directories(dir + "/tmp", ec);
  // An s3:// script is copied out of the store into the run's script/ folder and run from there.
  Result<std::string> fetched =
      LocalPath(script, dir + "/script/" + SafeFileName(script, "script.py"));
  if (!fetched.ok())
    return Finish(run, doc, "FAILED",
                  "Script " + script +
                      (fetched.status().code() == StatusCode::kEntityNotFound ? " not found: "
                                                                               : " cannot be run: ") +
                      fetched.status().message());
  std::string local = *fetched;
  if (!std::filesystem::is_regular_file(local, ec))
    return Finish(run, doc, "FAILED",
                  "Script " + script + " not found (looked for " + local + ")");

  // A local script is copied too: a job user that may not read the original's folder can
  // still run it, and a later change to the original does not reach a run already started.
  if (!StartsWith(local, dir + "/script/")) {
    const std::string script_copy =
        dir + "/script/" + std::filesystem::path(local).filename().string();
    std::filesystem::create_directories(dir + "/script", ec);
    std::filesystem::copy_file(local, script_copy, std::filesystem::copy_options::overwrite_existing, ec);
    if (ec) return Finish(run, doc, "FAILED", "Script " + script + " could not be copied: " + ec.message());
    local = script_copy;
  }

  const Json& arguments = (*doc)["Arguments"];
  std::vector<std::string> argv = {options_.python, "-u", local};
  std::string job_id = "j_" + run->job;
  argv.insert(argv.end(), {"--JOB_NAME", run->job, "--JOB_ID", job_id, "--JOB_RUN_ID", run->run_id});
  bool has_temp_dir = false;
  std::string extra_py_files;
  std::string extra_files;
  for (auto& [key, value] : arguments.items()) {
    std::string flag = StartsWith(key, "--") ? key : "--" + key;
    if (flag == "--TempDir") has_temp_dir = true;
    if (flag == "--extra-py-files") extra_py_files = value.is_string() ? value.get<std::string>() : "";
    if (flag == "--extra-files") extra_files = value.is_string() ? value.get<std::string>() : "";
    argv.push_back(flag);
    argv.push_back(value.is_string() ? value.get<std::string>() : DumpJson(value));
  }
  if (!has_temp_dir) argv.insert(argv.end(), {"--TempDir", dir + "/tmp"});

  std::string python_path = options_.runtime_path;
  // A .py file on PYTHONPATH is not importable (entries must be folders or zip files), so
  // single modules go into the run's own py/ folder, which goes on the path instead: objects
  // are copied there out of the store; a local file is linked there, so the run opens it with
  // its own rights, never the server's. Other entries (.zip, .egg, .whl) go on the path as
  // they are, objects as copies in py/<n>-<name>.
  const std::string py_dir = dir + "/py";
  bool py_dir_on_path = false;
  int entry_number = 0;
  for (const std::string& entry : Split(extra_py_files, ',')) {
    std::string uri = Trim(entry);
    if (uri.empty()) continue;
    std::string name = SafeFileName(uri, "");
    bool is_py = name.size() > 3 && name.compare(name.size() - 3, 3, ".py") == 0;
    std::string copy_to = py_dir + "/" + (is_py ? name : std::to_string(++entry_number) + "-" + name);
    Result<std::string> local = name.empty()
        ? Result<std::string>(Status::InvalidInput(uri + " names no file"))
        : LocalPath(uri, copy_to);
    if (!local.ok())
      return Finish(run, doc, "FAILED",
                    "--extra-py-files: cannot use " + uri + ": " + local.status().message());
    std::string path = *local;
    if (path != copy_to && !std::filesystem::exists(path, ec))
      return Finish(run, doc, "FAILED", "--extra-py-files: cannot use " + uri + ": no such file");
    if (is_py) {
      if (path != copy_to) {
        std::filesystem::create_directories(py_dir, ec);
        std::filesystem::remove(copy_to, ec);
        std::filesystem::create_symlink(std::filesystem::absolute(path, ec), copy_to, ec);
        if (ec)
          return Finish(run, doc, "FAILED",
                        "--extra-py-files: cannot use " + uri + ": " + ec.message());
      }
      if (py_dir_on_path) continue;
      py_dir_on_path = true;
      path = py_dir;
    }
    python_path += (python_path.empty() ? "" : ":") + path;
  }
  // --extra-files: copied (objects) or linked (local files) into the working directory, as
  // Glue copies them next to the script.
  for (const std::string& entry : Split(extra_files, ',')) {
    std::string uri = Trim(entry);
    if (uri.empty()) continue;
    std::string name = SafeFileName(uri, "");
    std::string copy_to = dir + "/work/" + name;
    Result<std::string> local = name.empty()
        ? Result<std::string>(Status::InvalidInput(uri + " names no file"))
        : LocalPath(uri, copy_to);
    if (!local.ok())
      return Finish(run, doc, "FAILED",
                    "--extra-files: cannot use " + uri + ": " + local.status().message());
    if (*local != copy_to) {
      if (!std::filesystem::exists(*local, ec))
        return Finish(run, doc, "FAILED", "--extra-files: cannot use " + uri + ": no such file");
      std::filesystem::remove(copy_to, ec);
      std::filesystem::create_symlink(std::filesystem::absolute(*local, ec), copy_to, ec);
      if (ec)
        return Finish(run, doc, "FAILED", "--extra-files: cannot use " + uri + ": " + ec.message());
    }
  }
  std::string access_key = "OGRUN" + RandomHex(15);
  RunGrant grant{access_key, run->job, run->run_id, GetString(og, "role")};
  const char* path_env = std::getenv("PATH");
  const char* home_env = std::getenv("HOME");
  std::vector<std::string> env = {
      std::string("PATH=") + (path_env ? path_env : "/usr/local/bin:/usr/bin:/bin"),
      std::string("HOME=") + (home_env ? home_env : dir + "/work"),
      "LANG=C.UTF-8",
      "PYTHONUNBUFFERED=1",
      "PYTHONPATH=" + python_path,
      "TMPDIR=" + dir + "/tmp",
      "AWS_ACCESS_KEY_ID=" + access_key,
      "AWS_DEFAULT_REGION=" + options_.region,
      "AWS_REGION=" + options_.region,
      "AWS_ENDPOINT_URL_GLUE=" + options_.endpoint,
      "AWS_ENDPOINT_URL_CLOUDWATCH_LOGS=" + options_.endpoint,
      "OPENGLUE_ENDPOINT=" + options_.endpoint,
      "OPENGLUE_JOB_NAME=" + run->job,
      "OPENGLUE_JOB_RUN_ID=" + run->run_id,
      "OPENGLUE_S3_ROOT=" + options_.data_dir + "/s3",
  };
  LaunchSpec spec;
  spec.argv = argv;
  spec.env = env;
  spec.working_dir = dir + "/work";
  spec.stdout_path = logs_->StdoutPath(run->run_id);
  spec.stderr_path = logs_->StderrPath(run->run_id);
  spec.exit_code_path = dir + "/exit_code";
  spec.run_dir = dir;
  std::filesystem::create_directories(std::filesystem::path(spec.stdout_path).parent_path(), ec);
  // The secret reaches the run through its environment only, never a command line or the store.
  std::string secret = credentials_.grant ? credentials_.grant(grant) : "";
  spec.env.push_back("AWS_SECRET_ACCESS_KEY=" + secret);
  Result<int> pid = launcher_->Launch(spec);
  if (!pid.ok()) {
    if (credentials_.revoke) credentials_.revoke(access_key);
    // The script never ran: Glue reports such runs as ERROR, not FAILED.
    return Finish(run, doc, "ERROR", "Could not start the job run: " + pid.status().message());
  }
  logs_->Follow(run->run_id);
  run->pid = *pid;
  run->exit_code_path = spec.exit_code_path;
  run->started_ms = clock_->NowMillis();
  run->state = "RUNNING";
  (*doc)["JobRunState"] = "RUNNING";
  (*doc)["LastModifiedOn"] = clock_->NowSeconds();
  (*doc)["_og"]["pid"] = *pid;
  (*doc)["_og"]["exit_code_path"] = spec.exit_code_path;
  (*doc)["_og"]["launched_ms"] = run->started_ms;
  (*doc)["_og"]["access_key"] = access_key;
  (*doc)["_og"].erase("secret");  // only the access key id is kept
  OG_LOG(kInfo, "job " << run->job << " run " << run->run_id << " RUNNING (pid " << *pid << ")");
  return SaveRun(run->key, *doc);
}

Status JobService::Finish(ActiveRun* run, Json* doc, const std::string& state,
                          const std::string& error) {
  double now = clock_->NowSeconds();
  (*doc)["JobRunState"] = state;
  (*doc)["LastModifiedOn"] = now;
  (*doc)["CompletedOn"] = now;
  if (run->started_ms > 0) {
    int64_t seconds = (clock_->NowMillis() - run->started_ms + 999) / 1000;
    (*doc)["ExecutionTime"] = seconds;
  }
  if (!error.empty()) (*doc)["ErrorMessage"] = error;
  std::string access_key = GetString((*doc)["_og"], "access_key");
  if (!access_key.empty() && credentials_.revoke) credentials_.revoke(access_key);
  if (run->pid > 0) logs_->Finish(run->run_id);
  run->state = state;
  OG_LOG(kInfo, "job " << run->job << " run " << run->run_id << " " << state
                       << (error.empty() ? "" : ": " + error));
  OG_RETURN_NOT_OK(SaveRun(run->key, *doc));
  // A failed run is retried as a new run while attempts remain; a timeout is not.
  if (state == "FAILED") {
    int attempt = doc->value("Attempt", 0);
    int64_t max_retries = (*doc)["_og"].value("max_retries", int64_t{0});
    if (attempt < max_retries) {
      OG_ASSIGN_OR_RETURN(auto txn, store_->BeginRead());
      OG_ASSIGN_OR_RETURN(auto job_doc, txn->Get(kJob, run->job));
      txn.reset();
      if (job_doc) {
        Json job = Json::parse(*job_doc);
        Json request{{"JobRunQueuingEnabled", true}};
        for (const char* member : {"Timeout", "MaxCapacity", "WorkerType", "NumberOfWorkers"})
          if (doc->contains(member)) request[member] = (*doc)[member];
        auto retry = CreateRun(job, (*doc)["Arguments"], request, attempt + 1, run->run_id);
        if (!retry.ok()) OG_LOG(kWarn, "retry of " << run->run_id << " not started: " << retry.status().message());
      }
    }
  }
  return Status::OK();
}

Status JobService::TickRun(ActiveRun* run) {
  // REQUIRES(mutex_)
  if (run->state == "WAITING") {
    // Held back by the job's own limit, or by the server's?
    if (ActiveCount(run->job) >= run->max_concurrent_runs) return Status::OK();
    if (LaunchedCount() >= options_.max_concurrent_runs) return Status::OK();
    OG_ASSIGN_OR_RETURN(Json doc, LoadRun(run->key));
    run->state = "STARTING";
    doc["JobRunState"] = "STARTING";
    doc["LastModifiedOn"] = clock_->NowSeconds();
    OG_RETURN_NOT_OK(SaveRun(run->key, doc));
    return Launch(run, &doc);
  }
  if (run->state == "STARTING") {
    if (LaunchedCount() >= options_.max_concurrent_runs) {
      OG_ASSIGN_OR_RETURN(Json doc, LoadRun(run->key));
      run->state = "WAITING";
      doc["JobRunState"] = "WAITING";
      return SaveRun(run->key, doc);
    }
    OG_ASSIGN_OR_RETURN(Json doc, LoadRun(run->key));
    return Launch(run, &doc);
  }
  // RUNNING or STOPPING: watch the process.
  ProcessStatus status = launcher_->Check(run->pid, run->exit_code_path);
  int64_t now = clock_->NowMillis();
  if (status.state == ProcessState::kRunning) {
    if (run->state == "RUNNING" && run->timeout_minutes > 0 &&
        now - run->started_ms >= run->timeout_minutes * 60000) {
      run->killed_for_timeout = true;
      run->state = "STOPPING";  // internal: waiting for the group to die
      run->stop_requested_ms = now;
      (void)launcher_->SignalGroup(run->pid, SIGKILL);
      run->sigkill_sent = true;
    } else if (run->state == "STOPPING" && !run->sigkill_sent &&
               now - run->stop_requested_ms >= options_.stop_grace_seconds * 1000LL) {
      (void)launcher_->SignalGroup(run->pid, SIGKILL);
      run->sigkill_sent = true;
    }
    return Status::OK();
  }
  // The run's main process has ended: leave no child of it behind, whatever the outcome.
  (void)launcher_->SignalGroup(run->pid, SIGKILL);
  OG_ASSIGN_OR_RETURN(Json doc, LoadRun(run->key));
  if (run->killed_for_timeout) {
    return Finish(run, &doc, "TIMEOUT",
                  "Job run timed out after " + std::to_string(run->timeout_minutes) +
                      " minutes; its processes were terminated.");
  }
  if (run->state == "STOPPING") return Finish(run, &doc, "STOPPED", "");
  if (status.state == ProcessState::kExited && status.exit_code == 0)
    return Finish(run, &doc, "SUCCEEDED", "");
  // The process wrote its stderr file itself, so it can be read before the log tailer drains it.
  std::string error = ErrorFromStderr(logs_->StderrPath(run->run_id));
  if (status.state == ProcessState::kExited) {
    if (error.empty()) error = "The job script exited with status " + std::to_string(status.exit_code);
  } else {
    error = "The job run's process ended without an exit status (killed)" + (error.empty() ? "" : ": " + error);
  }
  return Finish(run, &doc, "FAILED", error);
}

void JobService::Tick() {
  std::lock_guard<std::mutex> lock(mutex_);
  std::vector<uint64_t> sequences;
  for (auto& [seq, run] : active_) sequences.push_back(seq);
  for (uint64_t seq : sequences) {
    auto it = active_.find(seq);
    if (it == active_.end()) continue;
    ActiveRun* run = it->second.get();
    Status st = TickRun(run);
    if (!st.ok()) OG_LOG(kError, "run " << run->run_id << ": " << st.message());
    if (!IsActiveState(run->state)) active_.erase(seq);
  }
}

Status JobService::Recover() {
  std::lock_guard<std::mutex> lock(mutex_);
  // Only the runs left active are read, however long the history. The sequence counter is
  // restored first: finishing a run below may retry it as a new run, whose sequence must not be
  // one that a run further down still holds.
  OG_ASSIGN_OR_RETURN(auto txn, store_->BeginRead());
  OG_ASSIGN_OR_RETURN(auto last, txn->Get(kJobRunSequence, "last"));
  if (last) next_sequence_ = std::max<uint64_t>(next_sequence_, std::stoull(*last));
  OG_ASSIGN_OR_RETURN(auto active, txn->Scan(kActiveJobRun, store::ScanOptions{"", "", -1, true}));
  std::vector<store::Row> rows;
  for (const auto& entry : active) {
    OG_ASSIGN_OR_RETURN(auto doc, txn->Get(kJobRun, entry.key));
    if (doc) rows.push_back({entry.key, std::move(*doc)});
  }
  txn.reset();
  int adopted = 0, finished = 0, queued = 0;
  for (const auto& row : rows) {
    uint64_t sequence = SequenceOfKey(row.key);
    Json doc = Json::parse(row.doc);
    std::string state = GetString(doc, "JobRunState");
    if (!IsActiveState(state)) continue;
    auto run = std::make_unique<ActiveRun>();
    run->key = row.key;
    run->job = doc["JobName"];
    run->run_id = doc["Id"];
    run->sequence = sequence;
    run->state = state;
    run->timeout_minutes = doc.value("Timeout", int64_t{0});
    const Json& og = doc["_og"];
    run->max_concurrent_runs = og.value("max_concurrent_runs", int64_t{1});
    run->pid = og.value("pid", 0);
    run->exit_code_path = GetString(og, "exit_code_path");
    run->started_ms = og.value("launched_ms", int64_t{0});
    if (state == "RUNNING" || state == "STOPPING") {
      ProcessStatus status = launcher_->Check(run->pid, run->exit_code_path);
      if (status.state == ProcessState::kRunning) {
        std::string key = GetString(og, "access_key");
        // The secret is derived again from the access key id (it was never stored).
        if (!key.empty() && credentials_.grant)
          (void)credentials_.grant(RunGrant{key, run->job, run->run_id, GetString(og, "role")});
        logs_->Follow(run->run_id);
        if (state == "STOPPING") run->stop_requested_ms = clock_->NowMillis();
        ++adopted;
      } else if (status.state == ProcessState::kExited) {
        // It ended while the server was down: the next Tick finishes it from its exit code.
        logs_->Follow(run->run_id);
        ++adopted;
      } else {
        OG_RETURN_NOT_OK(Finish(run.get(), &doc, state == "STOPPING" ? "STOPPED" : "FAILED",
                             state == "STOPPING" ? "" :
                             "The server restarted and the job run's process was no longer "
                             "running; it ended without an exit status."));
        ++finished;
        continue;
      }
    } else {
      ++queued;  // WAITING or STARTING: launched by Tick as slots allow
    }
    active_[sequence] = std::move(run);
  }
  OG_LOG(kInfo, "job runs recovered: " << adopted << " re-adopted, " << finished << " finished, "
                                       << queued << " queued");
  return Status::OK();
}

void JobService::Start() {
  std::lock_guard<std::mutex> lock(thread_mutex_);
  if (ticker_.joinable()) return;
  stopping_ = false;
  ticker_ = std::thread([this] {
    std::unique_lock<std::mutex> lock(thread_mutex_);
    while (!stopping_) {
      lock.unlock();
      Tick();
      lock.lock();
      wake_.wait_for(lock, std::chrono::milliseconds(options_.tick_interval_ms),
                     [this] { return stopping_ || kicked_; });
      kicked_ = false;
    }
  });
}

void JobService::Kick() {
  {
    std::lock_guard<std::mutex> lock(thread_mutex_);
    kicked_ = true;
  }
  wake_.notify_all();
}

void JobService::Stop() {
  {
    std::lock_guard<std::mutex> lock(thread_mutex_);
    stopping_ = true;
  }
  wake_.notify_all();
  if (ticker_.joinable()) ticker_.join();
}

}  // namespace openglue::jobs
