// The real ProcessLauncher: posix_spawn of a tiny /bin/sh wrapper that runs the job program and
// records its exit status in a file, so the status survives a restart of the server.
//
// The process tree of one launch:
//
//   /bin/sh -c '<wrapper>' <exit_code_path> <resolved program> <args...>   (pid == pgid == sid)
//     └─ <program> <args...>                                              (same process group)
//          └─ whatever the program starts (same process group unless it calls setsid/setpgid)
//
// The wrapper runs the program as an ordinary (non-exec'd) command, waits for it, writes `$?`
// (the exit status, or 128+signal when the program was killed) to `<exit_code_path>.tmp` and
// renames it onto `exit_code_path`, then exits with the same status. Because the wrapper stays
// alive for as long as the program runs, its /proc/<pid>/cmdline names `exit_code_path`, which
// is how Check() recognises the process after a server restart (a reused pid has another
// command line). When the whole group is killed (SignalGroup), the wrapper dies too and no exit
// file is written: Check() then reports kGone, as the contract says.
//
// With a job user (run_sandbox.h) the wrapper and the program run under that uid: the launch is
// `setpriv --reuid U --regid G --groups SHARED --inh-caps=-all --no-new-privs -- /bin/sh -c
// '<wrapper>' ...`, setpriv exec'ing in place, so the pid, the process group and the command line
// stay as above. With a cgroup root, a first root shell puts itself (and so everything it execs
// and starts) into <cgroup root>/run-<pid> and execs the rest; SignalGroup(pgid, SIGKILL) then
// also kills that whole cgroup, which catches processes that left the group with setsid().
// With a uid of its own per run (job_user=auto), SignalGroup(pgid, SIGKILL) also kills every
// process of that uid (a child that takes the uid and calls kill(-1, SIGKILL)): that catches
// setsid() escapes where no cgroup v2 is available (a chroot, a container without cgroupfs).
//
// Nothing here installs signal handlers or touches process-wide state: SIGCHLD keeps its
// disposition, and waitpid() is only ever called for pids this launcher instance spawned.
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include <dirent.h>

#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "common/logging.h"
#include "common/thread_annotations.h"
#include "jobs/process_launcher.h"

namespace openglue::jobs {
namespace {

std::string ErrnoText(int err) { return std::strerror(err); }

// Absolute path of `mv` for the wrapper: the job's environment may carry a PATH without it.
std::string FindMv() {
  for (const char* candidate : {"/bin/mv", "/usr/bin/mv"}) {
    if (access(candidate, X_OK) == 0) return candidate;
  }
  return "mv";
}

// $0 is the exit-code path; "$@" is the resolved program and its arguments. The program path
// always contains a '/', so the shell never mistakes it for a builtin or a function. The
// wrapper itself outlives a SIGTERM sent to the group (`trap :`; the program still gets the
// default action), so a stopped program has its grace period and its exit status is recorded.
std::string WrapperScript(const std::string& mv, const char* umask_value) {
  return std::string("umask ") + umask_value + "; trap : TERM; \"$@\"; code=$?; printf %s \"$code\" > \"$0.tmp\" && " + mv +
         " -f -- \"$0.tmp\" \"$0\"; exit $code";
}

constexpr const char* kShell = "/bin/sh";

// $0 is the cgroup root: the shell moves itself into run-<its pid> and execs the rest, so the
// program and everything it starts are born inside the cgroup. Best effort: without the cgroup
// the run still starts (contained by its process group only).
constexpr const char* kJoinCgroupScript =
    "c=\"$0/run-$$\"; mkdir \"$c\" 2>/dev/null; echo $$ > \"$c/cgroup.procs\" 2>/dev/null; exec \"$@\"";

std::string FindSetpriv() {
  for (const char* candidate : {"/usr/bin/setpriv", "/bin/setpriv"}) {
    if (access(candidate, X_OK) == 0) return candidate;
  }
  return "";
}

bool IsExecutableFile(const std::string& path) {
  struct stat st;
  if (stat(path.c_str(), &st) != 0) return false;
  if (!S_ISREG(st.st_mode)) return false;
  return access(path.c_str(), X_OK) == 0;
}

std::string JoinPath(const std::string& dir, const std::string& name) {
  if (dir.empty()) return name;
  if (dir.back() == '/') return dir + name;
  return dir + "/" + name;
}

// The PATH a program lookup uses: the job's own, else the server's, else the POSIX default.
std::string EffectivePath(const std::vector<std::string>& env) {
  for (const std::string& entry : env) {
    if (entry.rfind("PATH=", 0) == 0) return entry.substr(5);
  }
  if (const char* server_path = getenv("PATH")) return server_path;
  return "/usr/local/bin:/usr/bin:/bin";
}

// Resolves argv[0] the way execvp would, but against `path_var` and relative to `working_dir`
// (where the program will run). Returns an absolute path, or InvalidInput naming the problem.
Result<std::string> ResolveProgram(const std::string& program, const std::string& working_dir,
                                   const std::string& path_var) {
  if (program.empty()) return Status::InvalidInput("The program name is empty");
  if (program.find('/') != std::string::npos) {
    std::string path = program[0] == '/' ? program : JoinPath(working_dir, program);
    if (!IsExecutableFile(path)) {
      return Status::InvalidInput("Program '" + program + "' does not exist or is not executable");
    }
    return path;
  }
  size_t start = 0;
  while (start <= path_var.size()) {
    size_t end = path_var.find(':', start);
    if (end == std::string::npos) end = path_var.size();
    std::string dir = path_var.substr(start, end - start);
    // An empty PATH entry means the current directory, which is the working directory.
    if (dir.empty()) dir = working_dir;
    if (dir[0] != '/') dir = JoinPath(working_dir, dir);
    std::string candidate = JoinPath(dir, program);
    if (IsExecutableFile(candidate)) return candidate;
    start = end + 1;
  }
  return Status::InvalidInput("Program '" + program + "' was not found on PATH (" + path_var + ")");
}

// Opens an output file for the child: created if needed, appended to. The descriptor is
// close-on-exec in the server and at least 3, so the dup2 onto 1/2 in the child is real.
Result<int> OpenOutput(const std::string& path, const char* what) {
  if (path.empty()) return Status::InvalidInput(std::string("The ") + what + " path is empty");
  int fd = open(path.c_str(), O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0644);
  if (fd < 0) {
    return Status::InvalidInput(std::string("Cannot open the ") + what + " file '" + path +
                                "': " + ErrnoText(errno));
  }
  if (fd < 3) {
    int high = fcntl(fd, F_DUPFD_CLOEXEC, 3);
    int saved = errno;
    close(fd);
    if (high < 0) return Status::Internal("fcntl(F_DUPFD_CLOEXEC): " + ErrnoText(saved));
    fd = high;
  }
  return fd;
}

// Reads the exit-code file. Returns false when it does not exist or does not hold a number.
bool ReadExitCode(const std::string& path, int* code) {
  // The file is written by the job's own user: never follow a link it may have put there.
  int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK);
  if (fd < 0) return false;
  char buf[32];
  ssize_t n;
  do {
    n = read(fd, buf, sizeof(buf) - 1);
  } while (n < 0 && errno == EINTR);
  close(fd);
  if (n <= 0) return false;
  int value = 0;
  for (ssize_t i = 0; i < n; ++i) {
    if (buf[i] == '\n') break;
    if (buf[i] < '0' || buf[i] > '9' || value > 100000) return false;
    value = value * 10 + (buf[i] - '0');
  }
  *code = value;
  return true;
}

// Whether /proc/<pid>/cmdline has `arg` as one of its arguments. A zombie has an empty command
// line, so a process that has ended is never recognised.
bool CmdlineHasArg(int pid, const std::string& arg) {
  std::string path = "/proc/" + std::to_string(pid) + "/cmdline";
  int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return false;
  std::string data;
  char buf[4096];
  while (data.size() < (1u << 20)) {
    ssize_t n = read(fd, buf, sizeof(buf));
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    data.append(buf, static_cast<size_t>(n));
  }
  close(fd);
  size_t start = 0;
  while (start < data.size()) {
    size_t end = data.find('\0', start);
    if (end == std::string::npos) end = data.size();
    if (std::string_view(data).substr(start, end - start) == arg) return true;
    start = end + 1;
  }
  return false;
}

// Whether `pid` is a zombie or gone (its command line will never show up).
bool HasEnded(int pid) {
  std::string path = "/proc/" + std::to_string(pid) + "/stat";
  int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return true;
  char buf[512];
  ssize_t n = read(fd, buf, sizeof(buf) - 1);
  close(fd);
  if (n <= 0) return true;
  std::string_view stat(buf, static_cast<size_t>(n));
  size_t paren = stat.rfind(')');
  if (paren == std::string_view::npos || paren + 2 >= stat.size()) return true;
  char state = stat[paren + 2];
  return state == 'Z' || state == 'X';
}

// posix_spawn returns once the child has started to exec, but the kernel fills in the new
// command line a moment later. Wait for it, so that a Check() by another launcher (a restarted
// server) can never see a launched process without its exit-code path. Microseconds in practice.
void WaitForCmdline(int pid, const std::string& exit_code_path) {
  for (int i = 0; i < 2000; ++i) {
    if (CmdlineHasArg(pid, exit_code_path) || HasEnded(pid)) return;
    usleep(i < 100 ? 50 : 1000);
  }
  OG_LOG(kWarn, "job process " << pid << " did not show its command line in time");
}

class PosixProcessLauncher : public ProcessLauncher {
 public:
  explicit PosixProcessLauncher(PosixLauncherOptions options)
      : options_(std::move(options)),
        script_(WrapperScript(FindMv(), options_.user.enabled ? "007" : "022")),
        setpriv_(FindSetpriv()) {
    uint64_t seed = static_cast<uint64_t>(getpid()) * 2654435761u ^ static_cast<uint64_t>(time(nullptr));
    next_uid_offset_ = options_.user.uid_count ? seed % options_.user.uid_count : 0;
    CleanStaleCgroups();
  }

  Result<int> Launch(const LaunchSpec& spec) override {
    if (spec.argv.empty()) return Status::InvalidInput("The command line is empty");
    if (spec.exit_code_path.empty()) return Status::InvalidInput("The exit code path is empty");
    struct stat st;
    if (spec.working_dir.empty() || stat(spec.working_dir.c_str(), &st) != 0 ||
        !S_ISDIR(st.st_mode)) {
      return Status::InvalidInput("Working directory '" + spec.working_dir + "' does not exist");
    }
    if (access(spec.working_dir.c_str(), X_OK) != 0) {
      return Status::InvalidInput("Working directory '" + spec.working_dir +
                                  "' is not accessible: " + ErrnoText(errno));
    }
    {
      // The wrapper must be able to write the exit code next to this path.
      std::string parent = spec.exit_code_path.substr(0, spec.exit_code_path.rfind('/') + 1);
      if (parent.empty()) parent = ".";
      if (stat(parent.c_str(), &st) != 0 || !S_ISDIR(st.st_mode)) {
        return Status::InvalidInput("The folder of the exit code file '" + spec.exit_code_path +
                                    "' does not exist");
      }
    }
    OG_ASSIGN_OR_RETURN(std::string program,
                     ResolveProgram(spec.argv[0], spec.working_dir, EffectivePath(spec.env)));
    if (access(kShell, X_OK) != 0) return Status::Internal("/bin/sh is not executable");

    {
      MutexLock lock(&mu_);
      RemoveEmptyCgroups();
    }
    // A stale exit file (an earlier run with the same path) must not be read as this run's.
    unlink(spec.exit_code_path.c_str());
    unlink((spec.exit_code_path + ".tmp").c_str());

    OG_ASSIGN_OR_RETURN(int out_fd, OpenOutput(spec.stdout_path, "stdout"));
    Result<int> err_fd = OpenOutput(spec.stderr_path, "stderr");
    if (!err_fd.ok()) {
      close(out_fd);
      return err_fd.status();
    }

    std::vector<std::string> args;
    std::vector<std::string> env_copy = spec.env;
    std::optional<uid_t> run_uid;  // a uid only this run uses
    if (!spec.python_modules.empty() && options_.self_binary.empty()) {
      close(out_fd);
      close(*err_fd);
      return Status::Internal("the server's own binary is unknown: --additional-python-modules cannot be installed");
    }
    // `__python-modules` runs as the server's user right before the drop to the run's user (or
    // before the wrapper), so the environment it installs is never the run's to write.
    auto python_modules = [&](const std::vector<std::string>& drop, std::optional<uid_t> owner) {
      if (spec.python_modules.empty()) return;
      args.insert(args.end(), {options_.self_binary, "__python-modules"});
      args.insert(args.end(), spec.python_modules.begin(), spec.python_modules.end());
      args.insert(args.end(), {"--exit-code", spec.exit_code_path, "--drop", std::to_string(drop.size())});
      if (owner) args.insert(args.end(), {"--uid", std::to_string(*owner)});
      if (owner && options_.user.per_run) args.push_back("--kill-uid");
      args.push_back("--");
    };
    if (!options_.cgroup_root.empty())
      args.insert(args.end(), {kShell, "-c", kJoinCgroupScript, options_.cgroup_root});
    if (options_.user.enabled) {
      if (setpriv_.empty()) {
        close(out_fd);
        close(*err_fd);
        return Status::Internal("setpriv (util-linux) is needed to run jobs as another user");
      }
      uid_t uid = options_.user.per_run ? PickUid() : options_.user.fixed_uid;
      gid_t gid = options_.user.per_run ? static_cast<gid_t>(uid) : options_.user.fixed_gid;
      if (options_.user.per_run) run_uid = uid;
      if (!spec.run_dir.empty()) {
        Status owned = ChownTree(spec.run_dir, uid, gid, 0700);
        if (!owned.ok()) {
          close(out_fd);
          close(*err_fd);
          return owned;
        }
      }
      // The server's HOME is not the job's: the run's folder is.
      for (std::string& e : env_copy)
        if (e.rfind("HOME=", 0) == 0) e = "HOME=" + (spec.run_dir.empty() ? spec.working_dir : spec.run_dir);
      // As root, before the uid changes: the run's own view of the object store.
      if (!spec.store_view.empty() && !options_.self_binary.empty()) {
        args.insert(args.end(), {options_.self_binary, "__store-view"});
        args.insert(args.end(), spec.store_view.begin(), spec.store_view.end());
      }
      std::vector<std::string> drop = {setpriv_, "--reuid=" + std::to_string(uid),
                                       "--regid=" + std::to_string(gid),
                                       "--groups=" + std::to_string(options_.user.shared_gid),
                                       "--inh-caps=-all", "--no-new-privs", "--"};
      python_modules(drop, uid);
      args.insert(args.end(), drop.begin(), drop.end());
    } else {
      python_modules({}, std::nullopt);
    }
    args.insert(args.end(), {kShell, "-c", script_, spec.exit_code_path, program});
    args.insert(args.end(), spec.argv.begin() + 1, spec.argv.end());
    std::vector<char*> argv;
    for (std::string& a : args) argv.push_back(a.data());
    argv.push_back(nullptr);
    std::vector<char*> envp;
    for (std::string& e : env_copy) envp.push_back(e.data());
    envp.push_back(nullptr);

    Result<int> pid = Spawn(argv.data(), envp.data(), spec.working_dir, out_fd, *err_fd);
    close(out_fd);
    close(*err_fd);
    if (pid.ok()) {
      if (run_uid) {
        MutexLock lock(&mu_);
        run_uids_[*pid] = *run_uid;
      }
      WaitForCmdline(*pid, spec.exit_code_path);
    }
    return pid;
  }

  Status SignalGroup(int pgid, int signal) override {
    // kill(-1) would signal every process we may signal, kill(0) our own group.
    if (pgid <= 1) return Status::InvalidInput("Invalid process group " + std::to_string(pgid));
    int rc = kill(-pgid, signal);
    int err = errno;
    if (signal == SIGKILL) {
      KillCgroup(pgid);
      KillRunUid(pgid);
    }
    if (rc == 0 || err == ESRCH) return Status::OK();
    errno = err;
    return Status::Internal("kill(-" + std::to_string(pgid) + ", " + std::to_string(signal) +
                            "): " + ErrnoText(errno));
  }

  std::optional<uid_t> RunUid(int pgid) override {
    {
      MutexLock lock(&mu_);
      auto it = run_uids_.find(pgid);
      if (it != run_uids_.end()) return it->second;
    }
    // A run adopted after a restart: the owner of its still-living group leader.
    struct stat st;
    if (pgid > 1 && stat(("/proc/" + std::to_string(pgid)).c_str(), &st) == 0 && IsPerRunUid(st.st_uid))
      return st.st_uid;
    return std::nullopt;
  }

  Status ProtectCode(int pgid, const std::vector<std::string>& pins) override {
    if (options_.self_binary.empty() || !options_.user.enabled || pins.size() < 2) return Status::OK();
    std::optional<uid_t> uid = RunUid(pgid);
    if (!uid) return Status::OK();  // not a run of its own uid (or gone): no view to change
    std::vector<std::string> args = {options_.self_binary, "__store-pin", std::to_string(pgid)};
    args.insert(args.end(), pins.begin(), pins.end());
    std::vector<char*> argv;
    for (std::string& a : args) argv.push_back(a.data());
    argv.push_back(nullptr);
    char* envp[] = {nullptr};
    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0);
    posix_spawn_file_actions_addopen(&actions, 1, "/dev/null", O_WRONLY, 0);
    posix_spawn_file_actions_addclosefrom_np(&actions, 3);
    // stderr stays the server's: a failure to protect is in the server's log.
    pid_t pid = -1;
    int rc = posix_spawn(&pid, argv[0], &actions, nullptr, argv.data(), envp);
    posix_spawn_file_actions_destroy(&actions);
    if (rc != 0) return Status::Internal("cannot run " + options_.self_binary + " __store-pin: " + ErrnoText(rc));
    int wstatus = 0;
    while (waitpid(pid, &wstatus, 0) < 0 && errno == EINTR) {
    }
    if (!WIFEXITED(wstatus) || WEXITSTATUS(wstatus) != 0)
      return Status::Internal("could not protect jobs' code in the store view of run process " +
                              std::to_string(pgid));
    return Status::OK();
  }

  ProcessStatus Check(int pid, const std::string& exit_code_path) override {
    ProcessStatus result;
    if (pid <= 0) return result;
    bool ours;
    {
      MutexLock lock(&mu_);
      ours = children_.count(pid) > 0;
    }
    if (ours) {
      int wstatus = 0;
      pid_t r;
      do {
        r = waitpid(pid, &wstatus, WNOHANG);
      } while (r < 0 && errno == EINTR);
      if (r == 0) {
        result.state = ProcessState::kRunning;
        return result;
      }
      // Reaped now (r == pid), or reaped by someone else (ECHILD): either way it has ended.
      MutexLock lock(&mu_);
      children_.erase(pid);
    } else if ((kill(pid, 0) == 0 || errno == EPERM) && CmdlineHasArg(pid, exit_code_path)) {
      result.state = ProcessState::kRunning;
      return result;
    }
    int code = 0;
    if (ReadExitCode(exit_code_path, &code)) {
      result.state = ProcessState::kExited;
      result.exit_code = code;
    }
    return result;
  }

 private:
  Result<int> Spawn(char* const* argv, char* const* envp, const std::string& working_dir,
                    int out_fd, int err_fd) {
    posix_spawn_file_actions_t actions;
    posix_spawnattr_t attr;
    if (posix_spawn_file_actions_init(&actions) != 0) {
      return Status::Internal("posix_spawn_file_actions_init failed");
    }
    if (posix_spawnattr_init(&attr) != 0) {
      posix_spawn_file_actions_destroy(&actions);
      return Status::Internal("posix_spawnattr_init failed");
    }
    int rc = 0;
    auto step = [&rc](int r) {
      if (rc == 0 && r != 0) rc = r;
    };
    step(posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0));
    step(posix_spawn_file_actions_adddup2(&actions, out_fd, 1));
    step(posix_spawn_file_actions_adddup2(&actions, err_fd, 2));
    // Descriptors the server opened without O_CLOEXEC (sockets, databases) must not leak.
    step(posix_spawn_file_actions_addclosefrom_np(&actions, 3));
    step(posix_spawn_file_actions_addchdir_np(&actions, working_dir.c_str()));
    // A new session (so a new process group); default signal dispositions and an empty mask,
    // whatever the server's threads ignore or block (SIGPIPE, ...).
    sigset_t all, none;
    sigfillset(&all);
    sigemptyset(&none);
    step(posix_spawnattr_setsigdefault(&attr, &all));
    step(posix_spawnattr_setsigmask(&attr, &none));
    step(posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETSID | POSIX_SPAWN_SETSIGDEF |
                                             POSIX_SPAWN_SETSIGMASK));
    pid_t pid = -1;
    if (rc == 0) {
      // Held across the spawn so a concurrent Check never sees the pid before it is ours.
      MutexLock lock(&mu_);
      // argv[0] is an absolute path: /bin/sh, or setpriv when jobs run as another user.
      rc = posix_spawn(&pid, argv[0], &actions, &attr, argv, envp);
      if (rc == 0) children_.insert(pid);
    }
    posix_spawn_file_actions_destroy(&actions);
    posix_spawnattr_destroy(&attr);
    if (rc != 0) {
      // glibc reports a failed exec or a failed file action (e.g. chdir) here, synchronously.
      return Status::InvalidInput("Cannot start the job process in '" + working_dir +
                                  "': " + ErrnoText(rc));
    }
    return static_cast<int>(pid);
  }

  // A uid of the range that no live process uses, taken round-robin so that a uid comes back
  // only after uid_count other runs.
  uid_t PickUid() {
    std::set<uid_t> busy;
    if (DIR* proc = opendir("/proc")) {
      while (struct dirent* entry = readdir(proc)) {
        if (entry->d_name[0] < '0' || entry->d_name[0] > '9') continue;
        struct stat st;
        if (fstatat(dirfd(proc), entry->d_name, &st, 0) == 0) busy.insert(st.st_uid);
      }
      closedir(proc);
    }
    MutexLock lock(&mu_);
    uid_t uid = options_.user.uid_base + 1;
    for (uint32_t i = 0; i < options_.user.uid_count; ++i) {
      uid = options_.user.uid_base + 1 + static_cast<uid_t>(next_uid_offset_);
      next_uid_offset_ = (next_uid_offset_ + 1) % options_.user.uid_count;
      if (!busy.count(uid)) break;
    }
    return uid;
  }

  // True for a uid of the per-run range: one run's own, never root's, the server's or a shared
  // job user's.
  bool IsPerRunUid(uid_t uid) const {
    return options_.user.per_run && uid > options_.user.uid_base &&
           uid <= options_.user.uid_base + options_.user.uid_count;
  }

  // Kills every process of the run's own uid. The uid is the one recorded at Launch, or (for a
  // run adopted after a restart) the owner of the still-living process group leader. A forked
  // child takes the uid (raw setresuid: only its own thread) and calls kill(-1, SIGKILL), which
  // the kernel applies to all that uid's processes at once, so a forking process cannot outrun
  // it; kill(-1) spares the caller itself.
  void KillRunUid(int pgid) {
    std::optional<uid_t> uid;
    {
      MutexLock lock(&mu_);
      auto it = run_uids_.find(pgid);
      if (it != run_uids_.end()) {
        uid = it->second;
        run_uids_.erase(it);
      }
    }
    if (!uid) {
      struct stat st;
      if (stat(("/proc/" + std::to_string(pgid)).c_str(), &st) == 0) uid = st.st_uid;
    }
    if (!uid || !IsPerRunUid(*uid) || geteuid() != 0) return;
    pid_t child = fork();
    if (child == 0) {
      if (syscall(SYS_setresgid, *uid, *uid, *uid) != 0 ||
          syscall(SYS_setresuid, *uid, *uid, *uid) != 0)
        _exit(1);
      kill(-1, SIGKILL);
      _exit(0);
    }
    if (child > 0) {
      int status;
      while (waitpid(child, &status, 0) < 0 && errno == EINTR) {
      }
    }
  }

  std::string CgroupOf(int pgid) const {
    return options_.cgroup_root + "/run-" + std::to_string(pgid);
  }

  // Kills every process of the run's cgroup and removes it once empty (retried later when its
  // processes are still dying).
  void KillCgroup(int pgid) {
    if (options_.cgroup_root.empty()) return;
    std::string dir = CgroupOf(pgid);
    {
      std::ofstream kill_file(dir + "/cgroup.kill");
      if (kill_file) kill_file << "1\n";
    }
    MutexLock lock(&mu_);
    pending_cgroups_.insert(dir);
    RemoveEmptyCgroups();
  }

  // REQUIRES(mu_)
  void RemoveEmptyCgroups() REQUIRES(mu_) {
    for (auto it = pending_cgroups_.begin(); it != pending_cgroups_.end();) {
      if (rmdir(it->c_str()) == 0 || errno == ENOENT) it = pending_cgroups_.erase(it);
      else ++it;
    }
  }

  // Cgroups of runs that ended while no server watched: empty ones go (rmdir refuses the others,
  // which belong to runs still going).
  void CleanStaleCgroups() {
    if (options_.cgroup_root.empty()) return;
    std::error_code ec;
    for (const auto& entry : std::filesystem::directory_iterator(options_.cgroup_root, ec)) {
      if (entry.path().filename().string().rfind("run-", 0) == 0) rmdir(entry.path().c_str());
    }
  }

  const PosixLauncherOptions options_;
  const std::string script_;
  const std::string setpriv_;
  Mutex mu_;
  uint64_t next_uid_offset_ GUARDED_BY(mu_) = 0;
  std::set<std::string> pending_cgroups_ GUARDED_BY(mu_);
  std::set<int> children_ GUARDED_BY(mu_);  // pids we spawned and have not reaped
  std::map<int, uid_t> run_uids_ GUARDED_BY(mu_);  // pgid -> the run's own uid (per-run uids)
};

}  // namespace

std::unique_ptr<ProcessLauncher> MakePosixProcessLauncher(PosixLauncherOptions options) {
  return std::make_unique<PosixProcessLauncher>(std::move(options));
}

}  // namespace openglue::jobs
