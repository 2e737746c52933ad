// LogStore: job-run output kept on disk and served through a CloudWatch-Logs-compatible subset
// (Logs_20140328: DescribeLogGroups, DescribeLogStreams, GetLogEvents, FilterLogEvents).
//
// Log groups are /aws-glue/jobs/output (stdout) and /aws-glue/jobs/error (stderr); the stream
// name is the JobRunId. A run's process writes straight into its raw files (StdoutPath,
// StderrPath); the tailer (logs/tailer.h) turns each new complete line into an event stamped
// with the time it was read, appended to an on-disk event file (logs/event_file.h). Nothing is
// held in memory per line, so a run that prints gigabytes does not exhaust memory; reads page
// through the event files (logs/logs_api.h). Streams older than the retention period are
// deleted by the tailer's thread.
//
// This class wires the parts: the folder layout, the in-memory stream index, the tailer and the
// API. The jobs module does not see it: main adapts it to jobs::RunOutput.
//
// Thread-safe.
#pragma once

#include <memory>
#include <string>

#include "common/clock.h"
#include "common/json.h"
#include "common/status.h"
#include "logs/layout.h"
#include "logs/logs_api.h"
#include "logs/stream_index.h"
#include "logs/tailer.h"

namespace openglue::logs {

struct LogStoreOptions {
  int retention_days = 30;     // 0 = keep forever
  int poll_interval_ms = 100;  // how often followed files are tailed
  // Used in the ARNs of log groups and streams.
  std::string region = "us-east-1";
  std::string account_id = "000000000000";
  // The log group names this store serves, per stream kind ("" = that kind is not served). A
  // second store with other names keeps other streams apart (the crawlers' /aws-glue/crawlers,
  // whose stdout kind is the crawl log): main registers both on the router.
  std::string output_group = kKinds[0].group;
  std::string error_group = kKinds[1].group;
};

class LogStore {
 public:
  // Keeps everything under `root` (created if needed) and indexes the streams already there.
  // `clock` is borrowed. InvalidInput for bad options, Internal if `root` cannot be used.
  static Result<std::unique_ptr<LogStore>> Make(const std::string& root, const Clock* clock,
                                                LogStoreOptions options);
  ~LogStore();

  // Where a run's process should write its output. `run_id` must be a valid stream name without
  // '/' (JobRunIds are). Also creates the run's folder, so the process can create the files.
  std::string StdoutPath(const std::string& run_id);
  std::string StderrPath(const std::string& run_id);
  // Starts following the run's raw files (also after a server restart): the next poll turns
  // their new complete lines into events, resuming where the last persisted offset left off.
  // Idempotent; cheap (never waits for a poll); a no-op for a run already Finish()ed.
  void Follow(const std::string& run_id) { tailer_.Follow(run_id); }
  // The run's process has ended: drain what is left (a last line without a newline becomes an
  // event too) and stop following. Synchronous: when it returns, every byte the process wrote
  // is an event. Works without a prior Follow (e.g. the run ended while the server was down).
  void Finish(const std::string& run_id) { tailer_.Finish(run_id); }

  // Starts and stops the background tailer / retention thread. Start is idempotent; Stop waits
  // for the thread to end (the destructor stops it too).
  void Start() { tailer_.Start(); }
  void Stop() { tailer_.Stop(); }
  // One round of the background thread's work, synchronously: tails every followed run once,
  // then deletes the runs older than the retention period (never a followed one).
  void PollOnce() { tailer_.PollOnce(); }

  // The Logs API (logs/logs_api.h).
  Result<Json> DescribeLogGroups(const Json& request) { return api_.DescribeLogGroups(request); }
  Result<Json> DescribeLogStreams(const Json& request) { return api_.DescribeLogStreams(request); }
  Result<Json> GetLogEvents(const Json& request) { return api_.GetLogEvents(request); }
  Result<Json> FilterLogEvents(const Json& request) { return api_.FilterLogEvents(request); }

 private:
  LogStore(std::string root, const Clock* clock, const LogStoreOptions& options,
           int64_t created_ms);

  Layout layout_;
  StreamIndex index_;
  Tailer tailer_;
  LogsApi api_;
};

}  // namespace openglue::logs
