#include "storage/s3_api_server.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netdb.h>
#include <signal.h>
#include <grp.h>
#include <sched.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/statvfs.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <utility>
#include <vector>

#include "common/json.h"
#include "common/logging.h"
#include "common/strings.h"

#ifndef CLOSE_RANGE_CLOEXEC
#define CLOSE_RANGE_CLOEXEC (1U << 2)
#endif
#ifndef MS_NOSYMFOLLOW
#define MS_NOSYMFOLLOW 256  // Linux 5.10
#endif
#ifndef ST_NOSYMFOLLOW
#define ST_NOSYMFOLLOW 0x2000
#endif

namespace openglue::storage {
namespace {

using Clock = std::chrono::steady_clock;

int64_t ElapsedMs(Clock::time_point since) {
  return std::chrono::duration_cast<std::chrono::milliseconds>(Clock::now() - since).count();
}

// The last `max_bytes` of a file, for error messages.
std::string Tail(const std::string& path, size_t max_bytes) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return "";
  in.seekg(0, std::ios::end);
  std::streamoff size = in.tellg();
  std::streamoff from = size > static_cast<std::streamoff>(max_bytes) ? size - max_bytes : 0;
  in.seekg(from);
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  return SanitizeUtf8(Trim(text));
}

std::string DescribeExit(int status) {
  if (WIFEXITED(status)) return "exit code " + std::to_string(WEXITSTATUS(status));
  if (WIFSIGNALED(status)) return std::string("signal ") + std::to_string(WTERMSIG(status));
  return "status " + std::to_string(status);
}

Result<sockaddr_in> Resolve(const std::string& host, int port) {
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(static_cast<uint16_t>(port));
  std::string name = host.empty() || host == "0.0.0.0" ? "127.0.0.1" : host;
  if (name == "localhost") name = "127.0.0.1";
  if (inet_pton(AF_INET, name.c_str(), &addr.sin_addr) != 1)
    return Status::InvalidInput("S3 API host '" + host + "' is not an IPv4 address");
  return addr;
}

// /dev/shm/openglue-s3api-<uid>-<hash of the state folder>, 0700, empty; owned by options.uid
// when set. /dev/shm is shared (sticky): an entry of that name that is not our own folder is
// left alone and a random name used instead.
Result<std::string> MakeRuntimeDir(const S3ApiServerOptions& options) {
  struct stat st;
  std::string base = "/dev/shm";
  if (stat(base.c_str(), &st) != 0 || !S_ISDIR(st.st_mode)) {
    const char* runtime = std::getenv("XDG_RUNTIME_DIR");
    base = runtime && *runtime ? runtime : "/tmp";
  }
  std::error_code ec;
  std::string state = std::filesystem::absolute(options.state_dir, ec).string();
  char hash[17];
  snprintf(hash, sizeof(hash), "%016zx", std::hash<std::string>()(state));
  std::string dir = base + "/openglue-s3api-" + std::to_string(geteuid()) + "-" + hash;
  if (lstat(dir.c_str(), &st) == 0 && S_ISDIR(st.st_mode) && !S_ISLNK(st.st_mode) &&
      (st.st_uid == geteuid() || (options.uid >= 0 && st.st_uid == static_cast<uid_t>(options.uid)))) {
    std::filesystem::remove_all(dir, ec);  // a predecessor's, killed before it cleaned up
  }
  if (mkdir(dir.c_str(), 0700) != 0) {
    std::string tmpl = base + "/openglue-s3api-XXXXXX";
    if (mkdtemp(tmpl.data()) == nullptr)
      return Status::Internal("cannot create a private folder under " + base + ": " + std::strerror(errno));
    dir = tmpl;
  }
  if (options.uid >= 0 &&
      chown(dir.c_str(), static_cast<uid_t>(options.uid), static_cast<gid_t>(options.gid)) != 0) {
    int err = errno;
    std::filesystem::remove_all(dir, ec);
    return Status::Internal("cannot chown " + dir + ": " + std::strerror(err));
  }
  return dir;
}

// What the child reports through the pipe before its execve: a step of the store's isolation that
// failed (the child goes on without it) or the failure of the exec itself (the child exits).
enum ChildStep : int {
  kUnshare = 1,
  kMakePrivate,
  kBindStore,
  kReadFlags,
  kRemountNoSymFollow,
  kNoSymFollowIgnored,
  kExec = 100,
};
struct ChildReport {
  int step;
  int err;
};

const char* DescribeStep(int step) {
  switch (step) {
    case kUnshare: return "unshare(CLONE_NEWNS)";
    case kMakePrivate: return "making / private";
    case kBindStore: return "bind-mounting the store";
    case kReadFlags: return "statfs of the store";
    case kRemountNoSymFollow: return "remounting the store nosymfollow";
    case kNoSymFollowIgnored: return "the kernel ignored nosymfollow";
    default: return "?";
  }
}

// In the forked child (async-signal-safe calls only): a mount namespace of its own in which
// `store` is a bind mount of itself with MS_NOSYMFOLLOW, so no symbolic link below it is
// followed by anything the child runs. The mount's other flags (ro, nosuid, nodev, noexec, atime
// options) are kept. Returns 0, or the failed step (errno in *err).
int IsolateStore(const char* store, int* err) {
  if (unshare(CLONE_NEWNS) != 0) return *err = errno, kUnshare;
  // Nothing mounted here propagates back to the server's namespace.
  if (mount(nullptr, "/", nullptr, MS_REC | MS_PRIVATE, nullptr) != 0) return *err = errno, kMakePrivate;
  if (mount(store, store, nullptr, MS_BIND | MS_REC, nullptr) != 0) return *err = errno, kBindStore;
  struct statfs fs;
  if (statfs(store, &fs) != 0) return *err = errno, kReadFlags;
  unsigned long flags = MS_REMOUNT | MS_BIND | MS_NOSYMFOLLOW;
  const std::pair<unsigned long, unsigned long> kept[] = {
      {ST_RDONLY, MS_RDONLY},     {ST_NOSUID, MS_NOSUID},         {ST_NODEV, MS_NODEV},
      {ST_NOEXEC, MS_NOEXEC},     {ST_NOATIME, MS_NOATIME},       {ST_NODIRATIME, MS_NODIRATIME},
      {ST_RELATIME, MS_RELATIME}};
  for (const auto& [st, ms] : kept)
    if (fs.f_flags & st) flags |= ms;
  if (mount(nullptr, store, nullptr, flags, nullptr) != 0) return *err = errno, kRemountNoSymFollow;
  // A kernel before 5.10 ignores the unknown flag: check that it took.
  if (statfs(store, &fs) != 0) return *err = errno, kReadFlags;
  if (!(fs.f_flags & ST_NOSYMFOLLOW)) return *err = EOPNOTSUPP, kNoSymFollowIgnored;
  return 0;
}

}  // namespace

S3ApiServer::S3ApiServer(S3ApiServerOptions options)
    : options_(std::move(options)), log_path_(options_.state_dir + "/versitygw.log") {}

S3ApiServer::~S3ApiServer() { Stop(); }

Result<std::unique_ptr<S3ApiServer>> S3ApiServer::Make(S3ApiServerOptions options) {
  if (options.binary.empty() || access(options.binary.c_str(), X_OK) != 0)
    return Status::InvalidInput("S3 API server binary '" + options.binary +
                                "' is not an executable file (run `make deps`, or set s3_api_binary)");
  if (options.root_access_key.empty() || options.root_secret_key.empty())
    return Status::InvalidInput("the S3 API server needs an access key id and a secret");
  if (options.port <= 0 || options.port > 65535)
    return Status::InvalidInput("S3 API port " + std::to_string(options.port) + " is not valid");
  OG_RETURN_NOT_OK(Resolve(options.host, options.port).status());
  std::error_code ec;
  std::filesystem::create_directories(options.root_dir, ec);
  std::filesystem::create_directories(options.state_dir, ec);
  if (ec || chmod(options.state_dir.c_str(), 0700) != 0)
    return Status::Internal("cannot create the S3 API state folder " + options.state_dir);
  if (options.uid >= 0 &&
      chown(options.state_dir.c_str(), static_cast<uid_t>(options.uid), static_cast<gid_t>(options.gid)) != 0)
    return Status::Internal("cannot chown the S3 API state folder " + options.state_dir + ": " +
                            std::strerror(errno));
  std::unique_ptr<S3ApiServer> server(new S3ApiServer(std::move(options)));
  // Secrets (users.json) and the admin socket live in memory, never on disk: a private folder
  // on a tmpfs, named after the state folder so that a restart after a crash replaces its own.
  OG_ASSIGN_OR_RETURN(server->runtime_dir_, MakeRuntimeDir(server->options_));
  server->admin_socket_ = server->runtime_dir_ + "/admin.sock";
  {
    MutexLock lock(&server->mutex_);
    OG_RETURN_NOT_OK(server->WriteAccounts());
  }
  return server;
}

std::string S3ApiServer::endpoint() const {
  std::string host = options_.host.empty() || options_.host == "0.0.0.0" ? "127.0.0.1" : options_.host;
  return "http://" + host + ":" + std::to_string(options_.port);
}

int S3ApiServer::pid() const {
  MutexLock lock(&mutex_);
  return pid_;
}

int S3ApiServer::starts() const {
  MutexLock lock(&mutex_);
  return starts_;
}

Status S3ApiServer::Grant(const std::string& access_key, const std::string& secret) {
  MutexLock lock(&mutex_);
  accounts_[access_key] = secret;
  return WriteAccounts();
}

Status S3ApiServer::Revoke(const std::string& access_key) {
  MutexLock lock(&mutex_);
  if (accounts_.erase(access_key) == 0) return Status::OK();
  return WriteAccounts();
}

// versitygw's internal IAM file: {"accessAccounts": {KEY: {access, secret, role, ...}}}. Written
// to a temporary name and renamed, so versitygw never reads half a file.
Status S3ApiServer::WriteAccounts() {
  Json accounts = Json::object();
  for (const auto& [key, secret] : accounts_) {
    accounts[key] = Json{{"access", key}, {"secret", secret}, {"role", "admin"},
                         {"userID", 0},   {"groupID", 0},     {"projectID", 0}};
  }
  std::string text = DumpJson(Json{{"accessAccounts", accounts}});
  std::string path = runtime_dir_ + "/users.json";
  std::string tmp = path + ".tmp";
  int fd = open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
  if (fd < 0) return Status::Internal("cannot write " + tmp + ": " + std::strerror(errno));
  if (options_.uid >= 0 &&
      fchown(fd, static_cast<uid_t>(options_.uid), static_cast<gid_t>(options_.gid)) != 0) {
    close(fd);
    return Status::Internal("cannot chown " + tmp + ": " + std::strerror(errno));
  }
  size_t done = 0;
  while (done < text.size()) {
    ssize_t n = write(fd, text.data() + done, text.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      close(fd);
      return Status::Internal("cannot write " + tmp + ": " + std::strerror(errno));
    }
    done += static_cast<size_t>(n);
  }
  close(fd);
  if (rename(tmp.c_str(), path.c_str()) != 0)
    return Status::Internal("cannot rename " + tmp + ": " + std::strerror(errno));
  return Status::OK();
}

Result<int> S3ApiServer::PickFreePort(const std::string& host) {
  OG_ASSIGN_OR_RETURN(sockaddr_in addr, Resolve(host, 0));
  int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return Status::Internal(std::string("socket: ") + std::strerror(errno));
  if (bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) != 0) {
    close(fd);
    return Status::Internal(std::string("bind: ") + std::strerror(errno));
  }
  socklen_t len = sizeof(addr);
  getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len);
  close(fd);
  return static_cast<int>(ntohs(addr.sin_port));
}

bool S3ApiServer::PortIsFree(const std::string& host, int port) {
  Result<sockaddr_in> addr = Resolve(host, port);
  if (!addr.ok()) return false;
  int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return false;
  int one = 1;
  setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));  // as Go's listeners do
  bool free = bind(fd, reinterpret_cast<const sockaddr*>(&*addr), sizeof(*addr)) == 0;
  close(fd);
  return free;
}

bool S3ApiServer::Accepting() const {
  if (options_.unix_socket) {
    int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0) return false;
    sockaddr_un addr{};
    addr.sun_family = AF_UNIX;
    std::string path = socket_path();
    std::strncpy(addr.sun_path, path.c_str(), sizeof(addr.sun_path) - 1);
    bool ok = connect(fd, reinterpret_cast<const sockaddr*>(&addr), sizeof(addr)) == 0;
    close(fd);
    return ok;
  }
  Result<sockaddr_in> addr = Resolve(options_.host, options_.port);
  if (!addr.ok()) return false;
  int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return false;
  bool ok = connect(fd, reinterpret_cast<const sockaddr*>(&*addr), sizeof(*addr)) == 0;
  close(fd);
  return ok;
}

bool S3ApiServer::links_followed() const {
  MutexLock lock(&mutex_);
  return links_followed_;
}

Result<int> S3ApiServer::Spawn() {
  // Everything the child needs is built before fork: after it, only async-signal-safe calls.
  // Under root (job users write into the store) the child gets a private mount namespace with the
  // store mounted nosymfollow: a link a job plants there reaches nothing (docs/security.md).
  const bool isolate = geteuid() == 0;
  std::error_code ec;
  std::string store = std::filesystem::canonical(options_.root_dir, ec).string();
  if (ec) store = options_.root_dir;
  std::string listen = options_.unix_socket ? socket_path() : options_.host + ":" + std::to_string(options_.port);
  if (options_.unix_socket) unlink(listen.c_str());  // a socket left by a killed predecessor
  std::vector<std::string> args = {
      options_.binary, "--port", listen, "--admin-port", admin_socket_, "--socket-perm", "0600",
      "--region", options_.region, "--iam-dir", runtime_dir_, "--iam-cache-disable",
      "--quiet", "posix", "--dir-perms", "0770", "--file-perms", "0660", options_.root_dir};
  const char* path_env = std::getenv("PATH");
  std::vector<std::string> env = {
      std::string("PATH=") + (path_env ? path_env : "/usr/bin:/bin"),
      "ROOT_ACCESS_KEY_ID=" + options_.root_access_key,
      "ROOT_SECRET_ACCESS_KEY=" + options_.root_secret_key,
  };
  std::vector<char*> argv, envp;
  for (std::string& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  for (std::string& e : env) envp.push_back(e.data());
  envp.push_back(nullptr);
  unlink(admin_socket_.c_str());  // a socket left by a killed predecessor
  int report[2];
  if (pipe2(report, O_CLOEXEC) != 0) return Status::Internal(std::string("pipe: ") + std::strerror(errno));
  pid_t parent = getpid();
  pid_t pid = fork();
  if (pid < 0) {
    close(report[0]);
    close(report[1]);
    return Status::Internal(std::string("fork: ") + std::strerror(errno));
  }
  if (pid == 0) {
    setpgid(0, 0);
    sigset_t none;
    sigemptyset(&none);
    sigprocmask(SIG_SETMASK, &none, nullptr);
    signal(SIGPIPE, SIG_DFL);
    umask(007);
    int log = open(log_path_.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0600);
    int null = open("/dev/null", O_RDONLY | O_CLOEXEC);
    if (log >= 0) {
      dup2(log, 1);
      dup2(log, 2);
    }
    if (null >= 0) dup2(null, 0);
    syscall(SYS_close_range, 3U, ~0U, CLOSE_RANGE_CLOEXEC);
    int err = 0;
    if (isolate) {
      ChildReport failed{0, 0};
      failed.step = IsolateStore(store.c_str(), &failed.err);
      if (failed.step != 0) {
        ssize_t ignored = write(report[1], &failed, sizeof(failed));
        (void)ignored;
      }
    }
    if (options_.gid >= 0) {
      gid_t gid = static_cast<gid_t>(options_.gid);
      if (setgroups(1, &gid) != 0 || setgid(gid) != 0) err = errno;
    }
    if (err == 0 && options_.uid >= 0 && setuid(static_cast<uid_t>(options_.uid)) != 0) err = errno;
    // After the uid change, which clears the parent-death signal.
    if (err == 0 && prctl(PR_SET_PDEATHSIG, SIGKILL) != 0) err = errno;
    if (getppid() != parent) _exit(127);  // the server died before prctl took effect
    if (err == 0) {
      execve(argv[0], argv.data(), envp.data());
      err = errno;
    }
    ChildReport failed{kExec, err};
    ssize_t ignored = write(report[1], &failed, sizeof(failed));
    (void)ignored;
    _exit(127);
  }
  close(report[1]);
  // Reports until the pipe closes (at the execve, which closes it, or at the child's exit).
  ChildReport isolation{0, 0};
  int exec_err = 0;
  for (;;) {
    ChildReport got{0, 0};
    ssize_t n = read(report[0], &got, sizeof(got));
    if (n < 0 && errno == EINTR) continue;
    if (n != sizeof(got)) break;
    if (got.step == kExec) exec_err = got.err;
    else isolation = got;
  }
  close(report[0]);
  if (exec_err != 0) {
    while (waitpid(pid, nullptr, 0) < 0 && errno == EINTR) {
    }
    return Status::Internal("cannot run " + options_.binary + ": " + std::strerror(exec_err));
  }
  bool warn = false;
  {
    MutexLock lock(&mutex_);
    bool followed = !isolate || isolation.step != 0;
    warn = isolate && followed && !warned_links_;
    if (warn) warned_links_ = true;
    links_followed_ = followed;
  }
  if (warn) {
    OG_LOG(kWarn, "S3 API: could not keep versitygw from following symbolic links in " << store << " ("
                      << DescribeStep(isolation.step) << ": " << std::strerror(isolation.err)
                      << "; needs CAP_SYS_ADMIN and Linux 5.10+): a job that plants a link in the "
                         "store can read versitygw's accounts file and environment over S3. Where "
                         "jobs are not trusted with those, set s3_api = off (docs/security.md)");
  }
  return static_cast<int>(pid);
}

Status S3ApiServer::Start() {
  {
    MutexLock lock(&mutex_);
    if (supervisor_.joinable() || stopping_) return Status::Internal("S3ApiServer::Start called twice");
    supervisor_done_ = false;
  }
  // The supervisor thread forks every child: PR_SET_PDEATHSIG fires when the forking thread
  // ends, and this one lives until Stop().
  supervisor_ = std::thread([this] { Supervise(); });
  Clock::time_point began = Clock::now();
  while (ElapsedMs(began) < options_.ready_timeout_ms) {
    std::string error;
    {
      MutexLock lock(&mutex_);
      error = spawn_error_;
    }
    if (!error.empty()) {
      Stop();
      return Status::Internal(error);
    }
    bool ours = false;  // our first child is up: not another program's listener on the port
    {
      MutexLock lock(&mutex_);
      ours = pid_ > 0 && starts_ == 1;
    }
    if (ours && Accepting()) {
      OG_LOG(kInfo, "S3 API (versitygw posix over " << options_.root_dir << ") listening on "
                                                   << (options_.unix_socket ? socket_path() : endpoint()) << " (pid " << pid() << ")"
                                                   << (links_followed() ? "" : "; symbolic links in the store are not followed"));
      return Status::OK();
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  std::string tail = Tail(log_path_, 600);
  Stop();
  return Status::Internal("the S3 API server did not accept connections on " + endpoint() +
                          " within " + std::to_string(options_.ready_timeout_ms) + " ms" +
                          (tail.empty() ? "" : "; its log " + log_path_ + " ends: " + tail));
}

void S3ApiServer::Supervise() {
  int backoff_ms = options_.initial_backoff_ms;
  for (;;) {
    {
      MutexLock lock(&mutex_);
      if (stopping_) break;
    }
    Result<int> spawned = Spawn();
    if (!spawned.ok()) {
      MutexLock lock(&mutex_);
      if (starts_ == 0) {  // the first start: Start() reports it
        spawn_error_ = spawned.status().message();
        break;
      }
      OG_LOG(kError, "S3 API server: " << spawned.status().message());
    } else {
      int pid = *spawned;
      {
        MutexLock lock(&mutex_);
        pid_ = pid;
        ++starts_;
        changed_.SignalAll();
      }
      Clock::time_point began = Clock::now();
      // Wait without reaping, so that Stop() never signals a pid that was reused.
      siginfo_t info{};
      while (waitid(P_PID, pid, &info, WEXITED | WNOWAIT) != 0 && errno == EINTR) {
      }
      int status = 0;
      {
        MutexLock lock(&mutex_);
        pid_ = -1;
        // Whatever it started in its group goes with it (the zombie keeps the group id taken).
        kill(-pid, SIGKILL);
        while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
        }
        changed_.SignalAll();
        if (stopping_) break;
      }
      if (ElapsedMs(began) > 30000) backoff_ms = options_.initial_backoff_ms;
      OG_LOG(kWarn, "S3 API server (pid " << pid << ") ended with " << DescribeExit(status)
                                           << "; restarting it in " << backoff_ms << " ms (log "
                                           << log_path_ << ")");
    }
    MutexLock lock(&mutex_);
    if (!stopping_) changed_.WaitFor(&mutex_, std::chrono::milliseconds(backoff_ms));
    backoff_ms = std::min(backoff_ms * 2, options_.max_backoff_ms);
  }
  MutexLock lock(&mutex_);
  supervisor_done_ = true;
  changed_.SignalAll();
}

void S3ApiServer::Stop() {
  {
    MutexLock lock(&mutex_);
    stopping_ = true;
    changed_.SignalAll();
    if (pid_ > 0) kill(-pid_, SIGTERM);
    Clock::time_point began = Clock::now();
    while (!supervisor_done_ && pid_ > 0 && ElapsedMs(began) < 5000)
      changed_.WaitFor(&mutex_, std::chrono::milliseconds(100));
    if (pid_ > 0) kill(-pid_, SIGKILL);
  }
  if (supervisor_.joinable()) supervisor_.join();
  std::error_code ec;
  if (!runtime_dir_.empty()) std::filesystem::remove_all(runtime_dir_, ec);
}

}  // namespace openglue::storage
