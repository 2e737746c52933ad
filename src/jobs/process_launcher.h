// ProcessLauncher: how the supervisor starts, signals and watches job-run processes. Injected so
// the supervisor's tests can use a fake that crashes, hangs or exits on command.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "common/status.h"
#include "jobs/run_sandbox.h"

namespace openglue::jobs {

struct LaunchSpec {
  std::vector<std::string> argv;  // argv[0] is looked up on PATH of `env` (or of the server)
  std::vector<std::string> env;   // the complete environment, "NAME=value"
  std::string working_dir;        // must exist
  std::string stdout_path;        // created or appended to; the process writes to it directly
  std::string stderr_path;
  // When the process ends on its own, its exit status is written here (0-255, or 128+signal),
  // so that a server restarted meanwhile can still learn how it ended.
  std::string exit_code_path;
  // The run's own folder (holds working_dir and exit_code_path). When jobs run as another user
  // (PosixLauncherOptions::user), the folder is given to that user (0700) before the start and
  // HOME points at it. May be empty (nothing is chowned).
  std::string run_dir;
  // The run's view of the object store folder: StoreViewArgs (jobs/store_view.h), applied when
  // runs run as other users (PosixLauncherOptions::self_binary runs `__store-view`). Empty: none.
  std::vector<std::string> store_view;
  // The run's --additional-python-modules: the options of `__python-modules` (jobs/
  // module_environments.h) before --exit-code, run as the server's user before the drop to the run's
  // user (PosixLauncherOptions::self_binary). Empty: none.
  std::vector<std::string> python_modules;
};

enum class ProcessState { kRunning, kExited, kGone };

struct ProcessStatus {
  ProcessState state = ProcessState::kGone;
  int exit_code = -1;  // set when state == kExited
};

class ProcessLauncher {
 public:
  virtual ~ProcessLauncher() = default;
  // Starts the process as the leader of a new process group (and session). Returns its pid,
  // which is also the group id. InvalidInput if it cannot be started (e.g. no such program).
  virtual Result<int> Launch(const LaunchSpec& spec) = 0;
  // Sends `signal` to the whole process group `pgid`. OK if the group no longer exists.
  virtual Status SignalGroup(int pgid, int signal) = 0;
  // Non-blocking. Whether `pid` still runs (also for a process started by an earlier server
  // process: it is recognised by `exit_code_path` in its command line, so a reused pid is not
  // mistaken for it), and its exit code once it ended on its own. kGone when it ended without
  // writing an exit code (killed with its group, or the pid is unknown). Reaps our own children.
  virtual ProcessStatus Check(int pid, const std::string& exit_code_path) = 0;
  // The uid that only the processes of the run led by `pgid` use (per-run job users,
  // run_sandbox.h), or nullopt when runs do not get a uid of their own. It names a run to
  // the parts of the server that see only a peer's uid (the Hive Metastore's connections).
  virtual std::optional<uid_t> RunUid(int pgid) { return std::nullopt; }
  // Adds jobs' code to the store view of the running run led by `pgid` (`pins`: the store
  // folder, then CodePinArgs, jobs/store_view.h). OK, doing nothing, where runs get no views.
  virtual Status ProtectCode(int pgid, const std::vector<std::string>& pins) { return Status::OK(); }
};

struct PosixLauncherOptions {
  JobUserOptions user;      // who runs the processes (default: the server's own user)
  std::string cgroup_root;  // FindCgroupRoot(); empty = contain by process group only
  // The openglue executable, for `__store-view` (runs under uids of their own; empty: no
  // views) and `__python-modules` (empty: runs with Python modules cannot start).
  std::string self_binary;
};

std::unique_ptr<ProcessLauncher> MakePosixProcessLauncher(PosixLauncherOptions options = {});

}  // namespace openglue::jobs
