// JobService: its construction, the operations table, paths, and the ticker thread that
// drives the runs (job_supervisor.cc).
#include "jobs/job_service_internal.h"

namespace openglue::jobs {

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
  auto number = [&](const char* member) {
    auto it = doc.find(member);
    return it != doc.end() && it->is_number() ? it->get<double>() : 0.0;
  };
  facts.last_modified_on = number("LastModifiedOn");
  facts.completed_on = number("CompletedOn");
  facts.execution_time = GetInt(doc, "ExecutionTime", 0);
  facts.error_message = GetString(doc, "ErrorMessage");
  facts.timeout_minutes = GetInt(doc, "Timeout", 0);
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
