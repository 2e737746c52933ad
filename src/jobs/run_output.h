// RunOutput: where a job run's output goes. The job service asks it where the run's process
// should write stdout and stderr, tells it when a run starts being watched (also after a server
// restart) and when the process has ended. The logs module implements it (CloudWatch-Logs-
// compatible streams); main wires the two, so jobs does not depend on logs.
//
// Implementations are thread-safe.
#pragma once

#include <string>

namespace openglue::jobs {

class RunOutput {
 public:
  virtual ~RunOutput() = default;

  // The files the run's process writes its stdout / stderr to. Creates what is needed for the
  // process to create them. `run_id` is a JobRunId.
  virtual std::string StdoutPath(const std::string& run_id) = 0;
  virtual std::string StderrPath(const std::string& run_id) = 0;
  // The run's process is running (or may be, after a restart): start collecting its output.
  // Idempotent and cheap.
  virtual void Follow(const std::string& run_id) = 0;
  // The run's process has ended: collect everything it wrote, synchronously.
  virtual void Finish(const std::string& run_id) = 0;
};

}  // namespace openglue::jobs
