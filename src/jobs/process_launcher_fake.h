// Test doubles for the job service's seams: a ProcessLauncher whose processes run until a test
// says they exit, and a RunOutput that only names files. Header-only; the jobs and schedule tests
// share them.
#pragma once

#include <csignal>
#include <map>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "jobs/process_launcher.h"
#include "jobs/run_output.h"

namespace openglue::jobs {

class FakeLauncher : public ProcessLauncher {
 public:
  Result<int> Launch(const LaunchSpec& spec) override {
    if (fail_launch) return Status::InvalidInput("no such program");
    int pid = next_pid++;
    processes[pid] = {ProcessState::kRunning, -1};
    launched.push_back(spec);
    return pid;
  }
  // SIGKILL ends the group; SIGTERM too when die_on_sigterm.
  Status SignalGroup(int pgid, int signal) override {
    signals.emplace_back(pgid, signal);
    if (signal == SIGKILL || (signal == SIGTERM && die_on_sigterm)) processes[pgid] = {ProcessState::kGone, -1};
    return Status::OK();
  }
  ProcessStatus Check(int pid, const std::string&) override {
    auto it = processes.find(pid);
    return it == processes.end() ? ProcessStatus{} : it->second;
  }
  void Exit(int pid, int code) { processes[pid] = {ProcessState::kExited, code}; }
  // Every running process exits with `code`.
  void ExitAll(int code) {
    for (auto& [pid, status] : processes)
      if (status.state == ProcessState::kRunning) status = {ProcessState::kExited, code};
  }

  int next_pid = 1000;
  bool fail_launch = false;
  bool die_on_sigterm = false;
  std::map<int, ProcessStatus> processes;
  std::vector<LaunchSpec> launched;
  std::vector<std::pair<int, int>> signals;
};

// Output files under `root`, named after the run; remembers which runs it followed and finished.
class FakeLogs : public RunOutput {
 public:
  explicit FakeLogs(std::string root) : root_(std::move(root)) {}
  std::string StdoutPath(const std::string& id) override { return root_ + "/" + id + ".out"; }
  std::string StderrPath(const std::string& id) override { return root_ + "/" + id + ".err"; }
  void Follow(const std::string& id) override { followed.insert(id); }
  void Finish(const std::string& id) override { finished.insert(id); }
  std::set<std::string> followed, finished;

 private:
  std::string root_;
};

}  // namespace openglue::jobs
