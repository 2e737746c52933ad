// What the job service's source files share (job_service*.cc, job_*.cc in this folder): the
// store's tables, the stored documents' helpers, and JobService's private types. Not part of
// the module's interface: only this service's own files include it.
#ifndef OPENGLUE_JOBS_JOB_SERVICE_INTERNAL_H_
#define OPENGLUE_JOBS_JOB_SERVICE_INTERNAL_H_

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
#include "resource/stored.h"
#include "resource/tags.h"
#include "common/logging.h"
#include "common/strings.h"
#include "storage/local_object_store.h"
#include "storage/location.h"

namespace openglue::jobs {


inline constexpr std::string_view kJob = "job";
inline constexpr std::string_view kJobRun = "job_run";        // job \x1f inverted sequence -> JobRun
inline constexpr std::string_view kJobRunId = "job_run_id";   // run id -> job_run key
// The runs not yet final (job_run keys, empty documents), so a restart reads only those.
inline constexpr std::string_view kActiveJobRun = "job_run_active";
// The last run sequence number handed out, so numbering survives restarts.
inline constexpr std::string_view kJobRunSequence = "job_run_sequence";
inline constexpr uint64_t kSequenceBase = 1000000000000000ULL;  // keys sort newest first
inline constexpr int kDefaultTimeoutMinutes = 2880;
// The exception line of a failed script kept as the run's ErrorMessage (cut on a character
// boundary), and the most any ErrorMessage holds.
inline constexpr size_t kErrorLineBytes = 2048;
inline constexpr size_t kMaxErrorMessageBytes = 4096;
// What Glue answers for a run of a Command.Name it has no runtime for.
inline constexpr std::string_view kUnknownCommandMessage = "Could not find command for the given criteria";

// The commands OpenGlue can run; CreateJob accepts any other name, its runs fail.
bool IsRunnableCommand(const std::string& name);

using resource::GetBool;
using resource::GetString;
using resource::ParseStored;

// The engine a glueetl run uses, from its `--engine` argument (DefaultArguments merged with the
// run's Arguments): "embedded", "spark", or "auto" (the default), which the run decides itself
// before its script runs (openglue_runtime.engines.spark.engine reads the script with
// openglue_runtime.engine_select and prints the decision and why into the run's log), so the jobs service never waits for it.
// `reason` is the sentence the run's log gets; an error names a run that must fail before it
// starts.
struct EngineChoice {
  std::string engine;  // "auto" | "embedded" | "spark"
  std::string reason;
  std::string error;   // non-empty: fail the run with this message
};

EngineChoice ChooseEngine(const Json& arguments);

// The run's argument `name` ("--spark-master") as text, "" when absent or not a string.
std::string ArgumentText(const Json& arguments, const std::string& name);

// The last '/'-separated part of a path or URI, when it is a plain file name (not "", "." or
// ".."); else `fallback`. Names the copy of an object in the run's folder.
std::string SafeFileName(const std::string& uri, const std::string& fallback);

std::string StateName(JobRunState state);

// Members of stored documents read without throwing: a member of another type than expected
// (a damaged row) reads as the fallback.
int64_t GetInt(const Json& object, const char* member, int64_t fallback);

const Json& GetObject(const Json& object, const char* member);

bool ParseU64(std::string_view text, uint64_t* out);

std::string RunKey(const std::string& job, uint64_t sequence);

uint64_t SequenceOfKey(const std::string& key);

// The public JobRun: internal bookkeeping stripped.
Json Present(Json run);

Json MergeArguments(const Json& job, const Json& run_arguments);

// OK for a GlueVersion OpenGlue runs ("" = none given, 2.0, 3.0, 4.0, 5.0, 5.1; one runtime runs
// them all, docs/engines.md); InvalidInput for 0.9 and 1.0, which AWS Glue ended (no jobs, no
// runs since 2026-04-01), and for any other value, naming the ones accepted.
Status CheckGlueVersion(const std::string& version);

// The Job document from a CreateJob request or a JobUpdate.
Result<Json> JobFromInput(const Json& input, const std::string& name, double created_on,
                          double now);

// The last "Type: message" line of a Python traceback in `stderr_path`, else its last line.
std::string ErrorFromStderr(const std::string& stderr_path);

// One run not yet final. `key`, `job`, `run_id`, `sequence` and `max_concurrent_runs` never
// change; the rest is changed under mutex_, or by the thread that marked the run busy (on its
// own copy, put back by Release).
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

}  // namespace openglue::jobs

#endif  // OPENGLUE_JOBS_JOB_SERVICE_INTERNAL_H_
