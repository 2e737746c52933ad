#include "jobs/job_service.h"

#include <fcntl.h>
#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <charconv>
#include <cstdio>
#include <cstring>
#include <exception>
#include <filesystem>
#include <fstream>

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
// The exception line of a failed script kept as the run's ErrorMessage (cut on a character
// boundary), and the most any ErrorMessage holds.
constexpr size_t kErrorLineBytes = 2048;
constexpr size_t kMaxErrorMessageBytes = 4096;
// What Glue answers for a run of a Command.Name it has no runtime for.
constexpr std::string_view kUnknownCommandMessage = "Could not find command for the given criteria";

// The commands OpenGlue can run; CreateJob accepts any other name, its runs fail.
bool IsRunnableCommand(const std::string& name) {
  return name == "glueetl" || name == "pythonshell";
}

using resource::GetString;

// The engine a glueetl run uses, from its `--engine` argument (DefaultArguments merged with the
// run's Arguments): "embedded", "spark", or "auto" (the default), which the run decides itself
// before its script runs (awsglue.spark_engine reads the script with awsglue.engine_select and
// prints the decision and why into the run's log), so the jobs service never waits for it.
// `reason` is the sentence the run's log gets; an error names a run that must fail before it
// starts.
struct EngineChoice {
  std::string engine;  // "auto" | "embedded" | "spark"
  std::string reason;
  std::string error;   // non-empty: fail the run with this message
};

EngineChoice ChooseEngine(const Json& arguments) {
  std::string requested;
  for (const char* key : {"--engine", "engine"}) {
    auto it = arguments.find(key);
    if (it != arguments.end() && it->is_string()) requested = it->get<std::string>();
  }
  std::string value = Trim(requested);
  std::transform(value.begin(), value.end(), value.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  if (value.empty()) return {"auto", "--engine not set, auto", ""};
  if (value == "auto") return {"auto", "--engine auto", ""};
  if (value == "embedded") return {"embedded", "--engine embedded", ""};
  if (value == "spark") return {"spark", "--engine spark", ""};
  return {"", "", "--engine '" + TruncateUtf8(SanitizeUtf8(requested), 100) +
                      "' is not an engine: use auto, embedded or spark"};
}

// The run's argument `name` ("--spark-master") as text, "" when absent or not a string.
std::string ArgumentText(const Json& arguments, const std::string& name) {
  for (const std::string& key : {name, name.substr(2)}) {
    auto it = arguments.find(key);
    if (it != arguments.end() && it->is_string()) return Trim(it->get<std::string>());
  }
  return "";
}

// The last '/'-separated part of a path or URI, when it is a plain file name (not "", "." or
// ".."); else `fallback`. Names the copy of an object in the run's folder.
std::string SafeFileName(const std::string& uri, const std::string& fallback) {
  size_t slash = uri.find_last_of('/');
  std::string name = slash == std::string::npos ? uri : uri.substr(slash + 1);
  if (name.empty() || name == "." || name == ".." || name.size() > 200) return fallback;
  return name;
}

std::string StateName(JobRunState state) { return std::string(JobRunStateName(state)); }

// Members of stored documents read without throwing: a member of another type than expected
// (a damaged row) reads as the fallback.
int64_t GetInt(const Json& object, const char* member, int64_t fallback) {
  if (!object.is_object()) return fallback;
  auto it = object.find(member);
  if (it == object.end() || !it->is_number()) return fallback;
  return it->is_number_float() ? static_cast<int64_t>(it->get<double>()) : it->get<int64_t>();
}

bool GetBool(const Json& object, const char* member, bool fallback) {
  if (!object.is_object()) return fallback;
  auto it = object.find(member);
  return it == object.end() || !it->is_boolean() ? fallback : it->get<bool>();
}

const Json& GetObject(const Json& object, const char* member) {
  static const Json kEmpty = Json::object();
  if (!object.is_object()) return kEmpty;
  auto it = object.find(member);
  return it == object.end() || !it->is_object() ? kEmpty : *it;
}

bool ParseU64(std::string_view text, uint64_t* out) {
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), *out);
  return ec == std::errc() && end == text.data() + text.size();
}

// A stored document (a job, a run) as a JSON object; Internal naming `what` when the row is
// damaged, so a request reports it instead of failing on a parser exception.
Result<Json> ParseStored(std::string_view text, const std::string& what) {
  Json doc = ParseJson(text);
  if (!doc.is_object()) return Status::Internal("The stored record of " + what + " cannot be read.");
  return doc;
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

// The public JobRun: internal bookkeeping stripped.
Json Present(Json run) {
  run.erase("_og");
  return run;
}

Json MergeArguments(const Json& job, const Json& run_arguments) {
  Json merged = GetObject(job, "DefaultArguments");
  if (run_arguments.is_object())
    for (auto& [k, v] : run_arguments.items()) merged[k] = v;
  const Json& fixed = GetObject(job, "NonOverridableArguments");
  for (auto& [k, v] : fixed.items()) merged[k] = v;
  return merged;
}

// The Job document from a CreateJob request or a JobUpdate.
Result<Json> JobFromInput(const Json& input, const std::string& name, double created_on,
                          double now) {
  // Any Command.Name is kept, as Glue does; a run of one OpenGlue has no runtime for fails.
  const Json& command = GetObject(input, "Command");
  std::string command_name = GetString(command, "Name", "glueetl");
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
  if (!job.contains("ExecutionProperty") || !job["ExecutionProperty"].is_object())
    job["ExecutionProperty"] = Json::object();
  // A null member means absent.
  if (!job["ExecutionProperty"].contains("MaxConcurrentRuns") ||
      !job["ExecutionProperty"]["MaxConcurrentRuns"].is_number())
    job["ExecutionProperty"]["MaxConcurrentRuns"] = 1;
  if (GetInt(job["ExecutionProperty"], "MaxConcurrentRuns", 1) < 1)
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
    // The bytes are the process's own: invalid UTF-8 is replaced and the cut falls on a
    // character boundary, so the line can go into a document as it is.
    if (!traceback) return TruncateUtf8(line, kErrorLineBytes);
    // Traceback lines are indented; the exception line is not.
    if (!it->empty() && (*it)[0] != ' ') return TruncateUtf8(line, kErrorLineBytes);
  }
  return "";
}

}  // namespace

// One run not yet final. `key`, `job`, `run_id`, `sequence` and `max_concurrent_runs` never
// change; the rest is changed under mutex_, or by the thread that marked the run busy (on its
// own copy, put back by Release).
// Run as `python -u -c kArgvBootstrap <run>/argv.json`: reads the run's sys.argv (the script,
// then its arguments) from the file, removes it, and runs the script as `python script args`
// would (its folder first on sys.path, __name__ "__main__", a namespace of its own).
constexpr char kArgvBootstrap[] =
    "import json, os, runpy, sys\n"
    "with open(sys.argv[1]) as f:\n"
    "    argv = json.load(f)\n"
    "os.unlink(sys.argv[1])\n"
    "sys.argv = argv\n"
    "sys.path[0] = os.path.dirname(os.path.abspath(argv[0]))\n"
    "runpy.run_path(argv[0], run_name='__main__')\n";

struct JobService::ActiveRun {
  std::string key;      // store key
  std::string job;
  std::string run_id;
  uint64_t sequence = 0;
  JobRunState state = JobRunState::kStarting;
  // A thread is doing this run's I/O outside the lock (launching it, watching its process,
  // finishing or stopping it, or committing its creation); others wait for released_.
  bool busy = false;
  // The ticker is launching it: it counts against the server-wide limit already.
  bool launching = false;
  std::string access_key;  // its run credential, once launched
  int pid = 0;
  std::string exit_code_path;
  int64_t started_ms = 0;       // when the process was launched
  int64_t timeout_minutes = 0;
  int64_t max_concurrent_runs = 1;  // the job's ExecutionProperty.MaxConcurrentRuns
  int64_t stop_requested_ms = 0;
  bool killed_for_timeout = false;
  bool sigkill_sent = false;
  int consecutive_errors = 0;  // failed ticks in a row (store errors), to keep the log readable
};

enum class JobService::Step {
  kNone,
  kStartWaiting,  // WAITING -> STARTING (persisted) -> launch
  kLaunch,        // STARTING -> launch
  kRequeue,       // STARTING, but the server-wide limit is reached -> WAITING
  kWatch,         // RUNNING or STOPPING: check the process, signal, finish
};

Status JobExists(store::Transaction* txn, const std::vector<std::string>& resource) {
  if (resource.size() == 2) {
    OG_ASSIGN_OR_RETURN(auto doc, txn->Get(kJob, resource[1]));
    if (doc) return Status::OK();
  }
  return Status::EntityNotFound("Job " + (resource.size() > 1 ? resource[1] : std::string()) +
                                " not found.");
}

Result<std::optional<JobRunFacts>> FindJobRun(store::Transaction* txn, const std::string& run_id) {
  OG_ASSIGN_OR_RETURN(auto key, txn->Get(kJobRunId, run_id));
  if (!key) return std::optional<JobRunFacts>();
  OG_ASSIGN_OR_RETURN(auto text, txn->Get(kJobRun, *key));
  if (!text) return std::optional<JobRunFacts>();
  OG_ASSIGN_OR_RETURN(Json doc, ParseStored(*text, "job run " + run_id));
  JobRunFacts facts;
  facts.job = GetString(doc, "JobName");
  facts.state = GetString(doc, "JobRunState");
  facts.attempt = GetInt(doc, "Attempt", 0);
  facts.arguments = GetObject(doc, "Arguments");
  auto started = doc.find("StartedOn");
  if (started != doc.end() && started->is_number()) facts.started_on = started->get<double>();
  return std::optional<JobRunFacts>(std::move(facts));
}

JobService::JobService(store::MetadataStore* store, const Clock* clock, Random* random,
                       ProcessLauncher* launcher, RunOutput* logs, RunCredentials credentials,
                       JobServiceOptions options)
    : store_(store), clock_(clock), launcher_(launcher), logs_(logs),
      credentials_(std::move(credentials)), options_(std::move(options)), random_(random) {}

JobService::~JobService() { Stop(); }

Result<std::unique_ptr<JobService>> JobService::Make(store::MetadataStore* store, const Clock* clock,
                                                     Random* random, ProcessLauncher* launcher,
                                                     RunOutput* logs, RunCredentials credentials,
                                                     JobServiceOptions options) {
  if (!store || !clock || !random || !launcher || !logs)
    return Status::Internal("JobService needs its parts");
  std::error_code ec;
  std::filesystem::create_directories(options.data_dir + "/runs", ec);
  if (ec) return Status::InvalidInput("cannot create " + options.data_dir + "/runs: " + ec.message());
  std::unique_ptr<JobService> service(new JobService(store, clock, random, launcher, logs,
                                                     std::move(credentials), std::move(options)));
  std::string folder = std::filesystem::weakly_canonical(service->options_.data_dir + "/s3", ec).string();
  service->store_folder_ = folder.empty() ? service->options_.data_dir + "/s3" : folder;
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
    add(GetString(GetObject(*job, "Command"), "ScriptLocation"), row.key);
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

// ---------------------------------------------------------------------------------------------
// Runs

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

Result<Json> JobService::StartJobRun(const Json& request) {
  std::string name = GetString(request, "JobName");
  OG_ASSIGN_OR_RETURN(auto txn, store_->BeginRead());
  OG_ASSIGN_OR_RETURN(auto doc, txn->Get(kJob, name));
  txn.reset();
  if (!doc) return Status::EntityNotFound("Job " + name + " not found.");
  OG_ASSIGN_OR_RETURN(Json job, ParseStored(*doc, "job " + name));
  if (request.contains("Timeout") && request["Timeout"].is_number() && GetInt(request, "Timeout", 1) < 1)
    return Status::InvalidInput("Timeout must be at least 1 minute");
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

// ---------------------------------------------------------------------------------------------
// The state machine

Status JobService::Launch(ActiveRun* run, Json* doc) {
  const Json& command = GetObject(GetObject(*doc, "_og"), "command");
  std::string command_name = GetString(command, "Name", "glueetl");
  if (!IsRunnableCommand(command_name))
    return Finish(run, doc, JobRunState::kFailed, std::string(kUnknownCommandMessage));
  std::string script = GetString(command, "ScriptLocation");
  std::string dir = RunDir(run->run_id);
  std::error_code ec;
  std::filesystem::create_directories(dir + "/work", ec);
  std::filesystem::create_directories(dir + "/tmp", ec);
  // An s3:// script is copied out of the store into the run's script/ folder and run from there.
  Result<std::string> fetched =
      LocalPath(script, dir + "/script/" + SafeFileName(script, "script.py"));
  if (!fetched.ok())
    return Finish(run, doc, JobRunState::kFailed,
                  "Script " + script +
                      (fetched.status().code() == StatusCode::kEntityNotFound ? " not found: "
                                                                               : " cannot be run: ") +
                      fetched.status().message());
  std::string local = *fetched;
  if (!std::filesystem::is_regular_file(local, ec))
    return Finish(run, doc, JobRunState::kFailed,
                  "Script " + script + " not found (looked for " + local + ")");

  const Json& arguments = GetObject(*doc, "Arguments");
  // glueetl scripts run on an engine; a Python shell script is plain Python with the same
  // environment (endpoints, credentials, the awsglue package) and no engine.
  EngineChoice engine;
  if (command_name == "glueetl") {
    engine = ChooseEngine(arguments);
    if (!engine.error.empty()) return Finish(run, doc, JobRunState::kFailed, engine.error);
  }
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
  // `pyspark` on a glueetl run's path is OpenGlue's package (python/shims, or the installed
  // package's openglue_standin): on the embedded engine it is the stand-in (scripts import
  // Spark's entry points without a JVM); on Spark it prepares the run's Spark settings and hands
  // over to the real pyspark; on auto it first decides which of the two the script needs.
  if (command_name == "glueetl" && !options_.runtime_path.empty()) {
    for (const char* folder : {"/shims", "/openglue_standin"}) {
      std::string shims = options_.runtime_path + folder;
      if (std::filesystem::is_regular_file(shims + "/pyspark/__init__.py", ec)) {
        python_path += ":" + shims;
        break;
      }
    }
  }
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
      return Finish(run, doc, JobRunState::kFailed,
                    "--extra-py-files: cannot use " + uri + ": " + local.status().message());
    std::string path = *local;
    if (path != copy_to && !std::filesystem::exists(path, ec))
      return Finish(run, doc, JobRunState::kFailed, "--extra-py-files: cannot use " + uri + ": no such file");
    if (is_py) {
      if (path != copy_to) {
        std::filesystem::create_directories(py_dir, ec);
        std::filesystem::remove(copy_to, ec);
        std::filesystem::create_symlink(std::filesystem::absolute(path, ec), copy_to, ec);
        if (ec)
          return Finish(run, doc, JobRunState::kFailed,
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
      return Finish(run, doc, JobRunState::kFailed,
                    "--extra-files: cannot use " + uri + ": " + local.status().message());
    if (*local != copy_to) {
      if (!std::filesystem::exists(*local, ec))
        return Finish(run, doc, JobRunState::kFailed, "--extra-files: cannot use " + uri + ": no such file");
      std::filesystem::remove(copy_to, ec);
      std::filesystem::create_symlink(std::filesystem::absolute(*local, ec), copy_to, ec);
      if (ec)
        return Finish(run, doc, JobRunState::kFailed, "--extra-files: cannot use " + uri + ": " + ec.message());
    }
  }
  std::string access_key = "OGRUN" + NewRandomHex(15);
  RunGrant grant{access_key, run->job, run->run_id, GetString(GetObject(*doc, "_og"), "role")};
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
      "AWS_ENDPOINT_URL_LOGS=" + options_.endpoint,
      "OPENGLUE_ENDPOINT=" + options_.endpoint,
      "OPENGLUE_JOB_NAME=" + run->job,
      "OPENGLUE_JOB_RUN_ID=" + run->run_id,
      "OPENGLUE_S3_ROOT=" + options_.data_dir + "/s3",
      // The engine and why: the runtime prints it into the run's error stream (driver log)
      // when the script starts its engine, and the server's log has it.
      "OPENGLUE_ENGINE=" + (command_name == "glueetl" ? engine.engine : command_name),
      "OPENGLUE_ENGINE_REASON=" + (command_name == "glueetl" ? engine.reason
                                                             : "Python shell job (no engine)"),
  };
  if (command_name == "glueetl") {
    // Where Spark runs and how big its executors are (read by awsglue.spark_conf), and the
    // run's folder (Spark's settings, event logs).
    std::string master = ArgumentText(arguments, "--spark-master");
    if (master.empty()) master = options_.spark_master;
    env.push_back("OPENGLUE_SPARK_MASTER=" + (master.empty() ? std::string("local[*]") : master));
    env.push_back("OPENGLUE_RUN_DIR=" + dir);
    if (doc->contains("WorkerType") && (*doc)["WorkerType"].is_string())
      env.push_back("OPENGLUE_WORKER_TYPE=" + (*doc)["WorkerType"].get<std::string>());
    if (doc->contains("NumberOfWorkers") && (*doc)["NumberOfWorkers"].is_number_integer())
      env.push_back("OPENGLUE_NUMBER_OF_WORKERS=" +
                    std::to_string((*doc)["NumberOfWorkers"].get<int64_t>()));
  }
  // Unmodified boto3 `s3` code in the script reaches the embedded store through the S3 API.
  if (!options_.s3_endpoint.empty()) env.push_back("AWS_ENDPOINT_URL_S3=" + options_.s3_endpoint);
  if (!options_.hms_uri.empty()) env.push_back("OPENGLUE_HMS_URI=" + options_.hms_uri);
  // The arguments (secrets among them, as Glue users pass them) reach the run in a file of its
  // own folder, which only the run's uid may read, not on a command line every local user sees
  // in /proc/<pid>/cmdline: a bootstrap rebuilds sys.argv as Glue's is and runs the script.
  const std::string argv_path = dir + "/argv.json";
  {
    Json list = Json::array();
    for (size_t i = 2; i < argv.size(); ++i) list.push_back(argv[i]);
    std::string text = DumpJson(list);
    int fd = open(argv_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, 0600);
    bool written = fd >= 0 && write(fd, text.data(), text.size()) == static_cast<ssize_t>(text.size());
    if (fd >= 0) close(fd);
    if (!written)
      return Finish(run, doc, JobRunState::kFailed, "cannot write the run's arguments to " + argv_path);
  }
  LaunchSpec spec;
  spec.argv = {options_.python, "-u", "-c", kArgvBootstrap, argv_path};
  spec.env = env;
  spec.working_dir = dir + "/work";
  spec.stdout_path = logs_->StdoutPath(run->run_id);
  spec.stderr_path = logs_->StderrPath(run->run_id);
  spec.exit_code_path = dir + "/exit_code";
  spec.run_dir = dir;
  {
    // The run's view of the store folder: its Role's grants, jobs' code read-only.
    StoreGrants grants = options_.store_grants ? options_.store_grants(grant.role) : StoreGrants{};
    Result<std::map<std::string, std::string>> code = CodeObjects();
    if (!code.ok())
      return Finish(run, doc, JobRunState::kError, "Could not start the job run: " + code.status().message());
    spec.store_view = StoreViewArgs(store_folder_, grants, *code);
  }
  std::filesystem::create_directories(std::filesystem::path(spec.stdout_path).parent_path(), ec);
  // The secret reaches the run through its environment only, never a command line or the store.
  std::string secret = credentials_.grant ? credentials_.grant(grant) : "";
  spec.env.push_back("AWS_SECRET_ACCESS_KEY=" + secret);
  Result<int> pid = launcher_->Launch(spec);
  if (!pid.ok()) {
    if (credentials_.revoke) credentials_.revoke(access_key);
    // The script never ran: Glue reports such runs as ERROR, not FAILED.
    return Finish(run, doc, JobRunState::kError,
                  "Could not start the job run: " + pid.status().message());
  }
  logs_->Follow(run->run_id);
  run->pid = *pid;
  run->access_key = access_key;
  run->exit_code_path = spec.exit_code_path;
  run->started_ms = clock_->NowMillis();
  run->state = JobRunState::kRunning;
  (*doc)["JobRunState"] = StateName(JobRunState::kRunning);
  (*doc)["LastModifiedOn"] = clock_->NowSeconds();
  (*doc)["_og"]["pid"] = *pid;
  (*doc)["_og"]["exit_code_path"] = spec.exit_code_path;
  (*doc)["_og"]["launched_ms"] = run->started_ms;
  (*doc)["_og"]["access_key"] = access_key;
  (*doc)["_og"].erase("secret");  // only the access key id is kept
  OG_LOG(kInfo, "job " << run->job << " run " << run->run_id << " RUNNING (pid " << *pid << ", "
                       << (command_name == "glueetl" ? "engine " + engine.engine + ": " + engine.reason
                                                     : command_name)
                       << ")");
  return SaveRun(run->key, *doc);
}

Status JobService::Finish(ActiveRun* run, Json* doc, JobRunState state, const std::string& error) {
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

void JobService::Start() {
  MutexLock lock(&thread_mutex_);
  if (ticker_.joinable()) return;
  stopping_ = false;
  ticker_ = std::thread([this] { TickerLoop(); });
}

void JobService::TickerLoop() {
  for (;;) {
    {
      MutexLock lock(&thread_mutex_);
      if (stopping_) return;
    }
    // Tick catches per run; this is the last line before std::terminate.
    try {
      Tick();
    } catch (const std::exception& e) {
      OG_LOG(kError, "job ticker: " << SanitizeUtf8(e.what()));
    } catch (...) {
      OG_LOG(kError, "job ticker: unknown exception");
    }
    MutexLock lock(&thread_mutex_);
    if (!stopping_ && !kicked_)
      wake_.WaitFor(&thread_mutex_, std::chrono::milliseconds(options_.tick_interval_ms));
    kicked_ = false;
  }
}

void JobService::Kick() {
  {
    MutexLock lock(&thread_mutex_);
    kicked_ = true;
  }
  wake_.SignalAll();
}

void JobService::Stop() {
  std::thread ticker;
  {
    MutexLock lock(&thread_mutex_);
    stopping_ = true;
    ticker = std::move(ticker_);
  }
  wake_.SignalAll();
  if (ticker.joinable()) ticker.join();
}

}  // namespace openglue::jobs
