// LogStore: job-run output kept on disk and served through a CloudWatch-Logs-compatible subset
// (Logs_20140328: DescribeLogGroups, DescribeLogStreams, GetLogEvents, FilterLogEvents).
//
// Log groups are /aws-glue/jobs/output (stdout) and /aws-glue/jobs/error (stderr); the stream
// name is the JobRunId. A run's process writes straight into its raw files (StdoutPath,
// StderrPath); a background tailer turns each new complete line into an event stamped with the
// time it was read, appended to an on-disk event file. Nothing is held in memory per line, so a
// run that prints gigabytes does not exhaust memory; reads page through the event files.
// Streams older than the retention period are deleted by the same background thread.
//
// Thread-safe.
#pragma once

#include <memory>
#include <string>

#include "common/clock.h"
#include "common/json.h"
#include "common/status.h"

namespace openglue::jobs {

struct LogStoreOptions {
  int retention_days = 30;     // 0 = keep forever
  int poll_interval_ms = 100;  // how often followed files are tailed
  // Used in the ARNs of log groups and streams.
  std::string region = "us-east-1";
  std::string account_id = "000000000000";
};

class LogStore {
 public:
  // Keeps everything under `root` (created if needed). `clock` is borrowed.
  static Result<std::unique_ptr<LogStore>> Make(const std::string& root, const Clock* clock,
                                                LogStoreOptions options);
  virtual ~LogStore() = default;

  // Where a run's process should write its output. `run_id` must be a valid stream name without
  // '/' (JobRunIds are). Also creates the run's folder, so the process can create the files.
  virtual std::string StdoutPath(const std::string& run_id) const = 0;
  virtual std::string StderrPath(const std::string& run_id) const = 0;
  // Starts following the run's raw files (also after a server restart): the next poll turns
  // their new complete lines into events, resuming where the last persisted offset left off.
  // Idempotent; cheap (never waits for a poll); a no-op for a run already Finish()ed.
  virtual void Follow(const std::string& run_id) = 0;
  // The run's process has ended: drain what is left (a last line without a newline becomes an
  // event too) and stop following. Synchronous: when it returns, every byte the process wrote
  // is an event. Works without a prior Follow (e.g. the run ended while the server was down).
  virtual void Finish(const std::string& run_id) = 0;

  // Starts and stops the background tailer / retention thread. Start is idempotent; Stop waits
  // for the thread to end (the destructor stops it too).
  virtual void Start() = 0;
  virtual void Stop() = 0;
  // One round of the background thread's work, synchronously: tails every followed run once,
  // then deletes the runs older than the retention period (never a followed one). For tests
  // with a FakeClock, and for callers that want the events now. (Not pure, so fakes need not
  // implement it.)
  virtual void PollOnce() {}

  // The Logs API, CloudWatch Logs request and response shapes (camelCase members:
  // logGroupName, logStreamName, startTime, endTime, nextToken, limit, startFromHead,
  // filterPattern, logStreamNames, logStreamNamePrefix, ...). Errors: EntityNotFound for an
  // unknown group or stream (the api maps it to ResourceNotFoundException), InvalidInput.
  virtual Result<Json> DescribeLogGroups(const Json& request) = 0;
  virtual Result<Json> DescribeLogStreams(const Json& request) = 0;
  virtual Result<Json> GetLogEvents(const Json& request) = 0;
  virtual Result<Json> FilterLogEvents(const Json& request) = 0;
};

}  // namespace openglue::jobs
