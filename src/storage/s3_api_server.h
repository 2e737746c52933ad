// S3ApiServer: the embedded store `<data_dir>/s3` served over the S3 API by an existing S3 server,
// versitygw's posix backend (`make deps` builds it into the venv; docs/storage.md).
//
// The server is a child process that this class starts, watches and stops:
//   - it runs in a process group of its own and gets SIGKILL when the thread that started it
//     ends (prctl PR_SET_PDEATHSIG), so it never outlives `openglue serve`, even after a crash
//     or a kill -9 of the server;
//   - if it exits on its own it is started again, after a backoff (200 ms doubling to 10 s;
//     reset once it has stayed up for 30 s), with a log line each time;
//   - Stop() ends it (SIGTERM to its group, SIGKILL after 5 s) and waits for it.
//
// Credentials: the root account (options.root_access_key / root_secret_key, passed through the
// child's environment, never its command line) plus the accounts given to Grant: versitygw's
// internal IAM reads them from `users.json` on every request (its cache is off), so a Grant or
// Revoke takes effect at the next request. That file and versitygw's admin API socket live in a
// private folder (0700) on a tmpfs (/dev/shm), so secrets never reach a disk; the admin API is
// not on the S3 port, so no S3 client can manage accounts. Granted accounts have versitygw's
// `admin` role (every bucket); the server narrows job runs' accounts in front of versitygw, with
// `unix_socket` set and its S3 gate (api/s3_gate.h) on the port.
//
// Symbolic links: versitygw follows them. When the server runs as root (job runs, under their own
// uids, can write into the store), the child is started in a mount namespace of its own where
// root_dir is bind-mounted onto itself with MS_NOSYMFOLLOW (Linux 5.10+): the kernel refuses to
// follow any link that lives in the store (ELOOP), so a link a job plants there reaches neither
// versitygw's users.json nor /proc/self/environ nor any other file. Its own files outside the
// store are resolved as before. If that mount cannot be made (no CAP_SYS_ADMIN, an older
// kernel), the child runs without it and one warning is logged. Not under root: no namespace.
//
// Thread-safety: every method may be called concurrently.
#pragma once

#include <map>
#include <memory>
#include <string>
#include <thread>

#include "common/status.h"
#include "common/thread_annotations.h"

namespace openglue::storage {

struct S3ApiServerOptions {
  std::string binary;     // the versitygw executable
  std::string root_dir;   // the directory served: bucket = sub-directory, key = relative path
  std::string state_dir;  // private folder for versitygw's log
  std::string host = "127.0.0.1";
  int port = 0;           // must be a real port (see PickFreePort)
  std::string region = "us-east-1";
  std::string root_access_key;
  std::string root_secret_key;
  // Who the child runs as (-1 = the server's own user and group). When the server runs as root
  // with unprivileged job users, the child runs as an unprivileged uid in the store's shared
  // group (and, see links_followed, with the store mounted nosymfollow).
  int64_t uid = -1;
  int64_t gid = -1;
  // Listen on a unix socket in the private folder (socket_path()) instead of host:port: the
  // server's S3 gate (api/s3_gate.h) is then the only way in, on host:port.
  bool unix_socket = false;
  int initial_backoff_ms = 200;
  int max_backoff_ms = 10000;
  int ready_timeout_ms = 20000;  // Start() waits this long for the port to accept connections
};

class S3ApiServer {
 public:
  // Checks the options, prepares state_dir (created 0700) and the private tmpfs folder (users.json
  // with no account yet). InvalidInput for a missing binary or empty credentials.
  static Result<std::unique_ptr<S3ApiServer>> Make(S3ApiServerOptions options);
  ~S3ApiServer();  // Stop()

  // Starts the child and its supervisor thread; returns once the port accepts connections.
  // Internal when the binary cannot be started or is not ready within ready_timeout_ms (the
  // message quotes the end of its log). Call once.
  Status Start() EXCLUDES(mutex_);
  // Ends the child and the supervision. Idempotent.
  void Stop() EXCLUDES(mutex_);

  // Adds (or replaces) an account `access_key` / `secret`, usable at the next request.
  Status Grant(const std::string& access_key, const std::string& secret) EXCLUDES(mutex_);
  // Removes the account; OK when there was none.
  Status Revoke(const std::string& access_key) EXCLUDES(mutex_);

  // "http://host:port".
  std::string endpoint() const;
  // Where versitygw listens when options.unix_socket (mode 0600, in a 0700 folder).
  std::string socket_path() const { return runtime_dir_ + "/s3.sock"; }
  // The child's pid, or -1 while none runs (between a death and its restart).
  int pid() const EXCLUDES(mutex_);
  // How many times the child was started (1 after Start, +1 per restart).
  int starts() const EXCLUDES(mutex_);
  const std::string& log_path() const { return log_path_; }
  // Whether the running child may follow symbolic links in the store: true when not under root,
  // or when its nosymfollow mount could not be made (logged once).
  bool links_followed() const EXCLUDES(mutex_);
  // The private tmpfs folder of users.json and the admin socket.
  const std::string& runtime_dir() const { return runtime_dir_; }

  // A TCP port on `host` that was free a moment ago (bind to port 0, read it, close).
  static Result<int> PickFreePort(const std::string& host);
  // Whether `port` on `host` can be bound now.
  static bool PortIsFree(const std::string& host, int port);

 private:
  explicit S3ApiServer(S3ApiServerOptions options);
  Status WriteAccounts() REQUIRES(mutex_);
  // fork + exec of the child. Returns its pid; Internal when exec failed (errno reported).
  Result<int> Spawn();
  void Supervise() EXCLUDES(mutex_);
  bool Accepting() const;

  const S3ApiServerOptions options_;
  const std::string log_path_;
  std::string runtime_dir_;  // users.json and the admin socket (a tmpfs); removed by Stop
  std::string admin_socket_;

  mutable Mutex mutex_;
  CondVar changed_;
  std::map<std::string, std::string> accounts_ GUARDED_BY(mutex_);
  int pid_ GUARDED_BY(mutex_) = -1;
  int starts_ GUARDED_BY(mutex_) = 0;
  bool stopping_ GUARDED_BY(mutex_) = false;
  bool supervisor_done_ GUARDED_BY(mutex_) = false;
  std::string spawn_error_ GUARDED_BY(mutex_);
  bool links_followed_ GUARDED_BY(mutex_) = true;
  bool warned_links_ GUARDED_BY(mutex_) = false;
  std::thread supervisor_;
};

}  // namespace openglue::storage
