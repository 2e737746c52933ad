// The environments of --additional-python-modules (module_environments.h): manifests, sealing,
// the cache's locks and cleaning, and the `openglue __python-modules` helper.
#include "jobs/module_environments.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include <openssl/evp.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "common/strings.h"

extern char** environ;

namespace openglue::jobs {
namespace {

namespace fs = std::filesystem;

constexpr const char* kPrefix = "[openglue] --additional-python-modules: ";
constexpr const char* kFailed = "--additional-python-modules could not be installed: ";
// Runs openglue_runtime.python_modules from the runtime folder (argv[1]) under -I, which keeps
// the run's PYTHONPATH, the working folder and the user's site out of sys.path.
constexpr const char* kLaunch =
    "import sys, runpy; sys.path.insert(0, sys.argv.pop(1)); "
    "runpy.run_module('openglue_runtime.python_modules', run_name='__main__', alter_sys=True)";

std::string ErrnoText(int err) { return std::strerror(err); }

std::string Octal(mode_t mode) {
  char text[8];
  std::snprintf(text, sizeof(text), "%04o", static_cast<unsigned>(mode & 07777));
  return text;
}

// The SHA-256 of the regular file at `path` (opened without following a link), hex.
Result<std::string> Sha256File(const std::string& path, uint64_t* size) {
  int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK);
  if (fd < 0) return Status::Internal(path + ": " + ErrnoText(errno));
  EVP_MD_CTX* ctx = EVP_MD_CTX_new();
  bool ok = ctx != nullptr && EVP_DigestInit_ex(ctx, EVP_sha256(), nullptr) == 1;
  std::vector<char> buffer(1 << 20);
  uint64_t total = 0;
  while (ok) {
    ssize_t n = read(fd, buffer.data(), buffer.size());
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      int err = errno;
      close(fd);
      EVP_MD_CTX_free(ctx);
      return Status::Internal(path + ": " + ErrnoText(err));
    }
    if (n == 0) break;
    total += static_cast<uint64_t>(n);
    ok = EVP_DigestUpdate(ctx, buffer.data(), static_cast<size_t>(n)) == 1;
  }
  close(fd);
  unsigned char digest[EVP_MAX_MD_SIZE];
  unsigned int length = 0;
  ok = ok && EVP_DigestFinal_ex(ctx, digest, &length) == 1;
  EVP_MD_CTX_free(ctx);
  if (!ok) return Status::Internal(path + ": SHA-256 failed");
  *size = total;
  return HexEncode(std::string_view(reinterpret_cast<const char*>(digest), length));
}

// Every entry under `root` (not following symlinks), as (relative path, lstat), sorted by path.
Result<std::vector<std::pair<std::string, struct stat>>> Walk(const std::string& root) {
  std::vector<std::pair<std::string, struct stat>> entries;
  std::error_code ec;
  fs::recursive_directory_iterator it(root, fs::directory_options::none, ec);
  if (ec) return Status::Internal(root + ": " + ec.message());
  for (; it != fs::recursive_directory_iterator(); it.increment(ec)) {
    if (ec) return Status::Internal(root + ": " + ec.message());
    struct stat st;
    std::string path = it->path().string();
    if (lstat(path.c_str(), &st) != 0) return Status::Internal(path + ": " + ErrnoText(errno));
    // Lexically: fs::relative would resolve a symbolic link to where it points.
    entries.emplace_back(it->path().lexically_relative(root).string(), st);
  }
  if (ec) return Status::Internal(root + ": " + ec.message());
  std::sort(entries.begin(), entries.end(),
            [](const auto& a, const auto& b) { return a.first < b.first; });
  return entries;
}

Status CheckKind(const std::string& path, const struct stat& st) {
  if (S_ISDIR(st.st_mode) || S_ISLNK(st.st_mode)) return Status::OK();
  if (!S_ISREG(st.st_mode))
    return Status::InvalidInput(path + " is not a file, folder or symbolic link: an environment may not hold it");
  if (st.st_nlink > 1)
    return Status::InvalidInput(path + " has " + std::to_string(st.st_nlink) +
                                " hard links: an environment may not share files with the rest of the machine");
  return Status::OK();
}

void Say(const std::string& line) {
  std::string text = line + "\n";
  (void)!write(STDERR_FILENO, text.data(), text.size());
}

// The helper's end when the set cannot be installed: the reason as the error log's last line,
// status 1 in the exit-code file (so the run ends FAILED, not "without an exit status").
int Failed(const std::string& exit_code_path, const std::string& reason, bool said = false) {
  if (!said) Say(kFailed + reason);
  if (!exit_code_path.empty()) {
    std::string tmp = exit_code_path + ".tmp";
    int fd = open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, 0644);
    if (fd >= 0) {
      (void)!write(fd, "1", 1);
      close(fd);
      rename(tmp.c_str(), exit_code_path.c_str());
    }
  }
  return 1;
}

// An flock on `path` that is still the file at `path` once held (a cleaner may unlink a lock
// file it holds; whoever opened the old one then tries again). -1 with errno on failure;
// EWOULDBLOCK when `wait` is false and another holds it.
int LockFile(const std::string& path, int operation, bool wait, bool keep_on_exec) {
  for (int attempt = 0; attempt < 100; ++attempt) {
    int fd = open(path.c_str(), O_RDONLY | O_CREAT | O_NOFOLLOW | (keep_on_exec ? 0 : O_CLOEXEC), 0600);
    if (fd < 0) return -1;
    int rc;
    do {
      rc = flock(fd, operation | (wait ? 0 : LOCK_NB));
    } while (rc != 0 && errno == EINTR);
    if (rc != 0) {
      int err = errno;
      close(fd);
      errno = err;
      return -1;
    }
    struct stat held, now;
    if (fstat(fd, &held) == 0 && stat(path.c_str(), &now) == 0 && held.st_ino == now.st_ino &&
        held.st_dev == now.st_dev)
      return fd;
    close(fd);
  }
  errno = EAGAIN;
  return -1;
}

bool IsKey(const std::string& name) {
  if (name.size() != 64) return false;
  return std::all_of(name.begin(), name.end(),
                     [](char c) { return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'); });
}

// Runs `argv` (argv[0] an absolute path, or a name looked up on PATH) as a child with the
// helper's environment plus `extra_env`; its stdout into `*out` when `out` is set, else onto
// stderr. Returns its exit status (128 + signal when killed), -1 when it could not start.
int RunChild(const std::vector<std::string>& argv, const std::vector<std::string>& extra_env,
             std::string* out) {
  int pipe_fds[2] = {-1, -1};
  if (out != nullptr && pipe2(pipe_fds, O_CLOEXEC) != 0) return -1;
  pid_t pid = fork();
  if (pid < 0) return -1;
  if (pid == 0) {
    if (out != nullptr) dup2(pipe_fds[1], STDOUT_FILENO);
    else dup2(STDERR_FILENO, STDOUT_FILENO);
    for (const std::string& entry : extra_env) putenv(const_cast<char*>(entry.c_str()));
    std::vector<char*> args;
    for (const std::string& a : argv) args.push_back(const_cast<char*>(a.c_str()));
    args.push_back(nullptr);
    execvp(args[0], args.data());
    Say(std::string(kFailed) + "cannot run " + argv[0] + ": " + ErrnoText(errno));
    _exit(127);
  }
  if (out != nullptr) {
    close(pipe_fds[1]);
    char buffer[4096];
    for (;;) {
      ssize_t n = read(pipe_fds[0], buffer, sizeof(buffer));
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) break;
      if (out->size() < (1u << 20)) out->append(buffer, static_cast<size_t>(n));
    }
    close(pipe_fds[0]);
  }
  int status = 0;
  while (waitpid(pid, &status, 0) < 0) {
    if (errno != EINTR) return -1;
  }
  if (WIFEXITED(status)) return WEXITSTATUS(status);
  if (WIFSIGNALED(status)) return 128 + WTERMSIG(status);
  return -1;
}

// Kills every process of `uid` (what pip or a package's build left running): a child takes the
// uid and calls kill(-1, SIGKILL), which the kernel applies to all of them at once.
void KillUid(uid_t uid) {
  pid_t child = fork();
  if (child == 0) {
    if (syscall(SYS_setresgid, uid, uid, uid) != 0 || syscall(SYS_setresuid, uid, uid, uid) != 0) _exit(1);
    kill(-1, SIGKILL);
    _exit(0);
  }
  if (child > 0) {
    int status;
    while (waitpid(child, &status, 0) < 0 && errno == EINTR) {
    }
  }
}

Result<Json> ReadJsonFile(const std::string& path) {
  int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK);
  if (fd < 0) return Status::Internal(path + ": " + ErrnoText(errno));
  std::string text;
  char buffer[65536];
  for (;;) {
    ssize_t n = read(fd, buffer, sizeof(buffer));
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    text.append(buffer, static_cast<size_t>(n));
    if (text.size() > (256u << 20)) break;
  }
  close(fd);
  Json doc = ParseJson(text);
  if (doc.is_discarded() || !doc.is_object()) return Status::InvalidInput(path + " is not a JSON object");
  return doc;
}

Status WriteFileExclusive(const std::string& path, const std::string& text, mode_t mode) {
  int fd = open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, mode);
  if (fd < 0) return Status::Internal(path + ": " + ErrnoText(errno));
  bool ok = write(fd, text.data(), text.size()) == static_cast<ssize_t>(text.size()) && fsync(fd) == 0;
  int err = errno;
  close(fd);
  if (!ok) return Status::Internal(path + ": " + ErrnoText(err));
  return Status::OK();
}

std::string Iso8601(int64_t seconds) {
  time_t t = static_cast<time_t>(seconds);
  struct tm tm;
  gmtime_r(&t, &tm);
  char text[32];
  std::strftime(text, sizeof(text), "%Y-%m-%dT%H:%M:%SZ", &tm);
  return text;
}

double SecondsSince(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

std::string Seconds(double s) {
  char text[32];
  std::snprintf(text, sizeof(text), "%.1f s", s);
  return text;
}

// Removes every leftover folder of `key` (staging or trash) in `cache`: only the holder of the
// key's install lock calls it, so none of them is in use.
void RemoveLeftovers(const std::string& cache, const std::string& key) {
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator(cache, ec)) {
    std::string name = entry.path().filename().string();
    if (StartsWith(name, ".staging-" + key + "-") || StartsWith(name, ".trash-" + key + "-"))
      (void)RemoveTree(entry.path().string());
  }
}

}  // namespace

Result<Json> BuildManifest(const std::string& site) {
  OG_ASSIGN_OR_RETURN(auto entries, Walk(site));
  Json list = Json::array();
  for (const auto& [rel, st] : entries) {
    std::string path = site + "/" + rel;
    OG_RETURN_NOT_OK(CheckKind(path, st));
    if (S_ISDIR(st.st_mode)) {
      list.push_back(Json::array({rel, "d", Octal(st.st_mode)}));
    } else if (S_ISLNK(st.st_mode)) {
      std::error_code ec;
      fs::path target = fs::read_symlink(path, ec);
      if (ec) return Status::Internal(path + ": " + ec.message());
      list.push_back(Json::array({rel, "l", target.string()}));
    } else {
      uint64_t size = 0;
      OG_ASSIGN_OR_RETURN(std::string sha, Sha256File(path, &size));
      list.push_back(Json::array({rel, "f", Octal(st.st_mode), size, sha}));
    }
  }
  return Json{{"entries", std::move(list)}};
}

Status VerifyManifest(const std::string& site, const Json& manifest) {
  if (!manifest.is_object() || !manifest.contains("entries") || !manifest["entries"].is_array())
    return Status::InvalidInput("the manifest lists no entries");
  std::map<std::string, Json> expected;
  for (const Json& entry : manifest["entries"])
    if (entry.is_array() && !entry.empty() && entry[0].is_string()) expected[entry[0].get<std::string>()] = entry;
  Result<Json> actual = BuildManifest(site);
  if (!actual.ok()) return Status::InvalidInput(actual.status().message());
  std::map<std::string, Json> found;
  for (const Json& entry : (*actual)["entries"]) found[entry[0].get<std::string>()] = entry;
  for (const auto& [rel, entry] : found) {
    auto it = expected.find(rel);
    if (it == expected.end()) return Status::InvalidInput("site/" + rel + ": not in the manifest");
    if (it->second != entry) {
      bool content = entry.size() == 5 && it->second.size() == 5 && entry[4] != it->second[4];
      return Status::InvalidInput("site/" + rel + (content ? ": content differs (SHA-256)" : ": differs from the manifest"));
    }
  }
  for (const auto& [rel, entry] : expected)
    if (!found.count(rel)) return Status::InvalidInput("site/" + rel + ": missing");
  return Status::OK();
}

Status SealTree(const std::string& root, uid_t owner, gid_t group) {
  OG_ASSIGN_OR_RETURN(auto entries, Walk(root));
  entries.insert(entries.begin(), {"", {}});
  if (lstat(root.c_str(), &entries.front().second) != 0) return Status::Internal(root + ": " + ErrnoText(errno));
  for (const auto& [rel, st] : entries) {
    std::string path = rel.empty() ? root : root + "/" + rel;
    OG_RETURN_NOT_OK(CheckKind(path, st));
    if (fchownat(AT_FDCWD, path.c_str(), owner, group, AT_SYMLINK_NOFOLLOW) != 0)
      return Status::Internal("chown " + path + ": " + ErrnoText(errno));
    if (S_ISLNK(st.st_mode)) continue;
    mode_t mode = S_ISDIR(st.st_mode) || (st.st_mode & 0111) ? 0755 : 0644;
    if (fchmodat(AT_FDCWD, path.c_str(), mode, 0) != 0)
      return Status::Internal("chmod " + path + ": " + ErrnoText(errno));
  }
  return Status::OK();
}

Status RemoveTree(const std::string& path) {
  struct stat st;
  if (lstat(path.c_str(), &st) != 0) return errno == ENOENT ? Status::OK() : Status::Internal(path + ": " + ErrnoText(errno));
  std::error_code ec;
  if (S_ISDIR(st.st_mode)) {
    // Folders a package made without write permission for its owner are opened up first.
    fs::recursive_directory_iterator it(path, fs::directory_options::none, ec), end;
    chmod(path.c_str(), 0700);
    for (; !ec && it != end; it.increment(ec)) {
      struct stat entry;
      if (lstat(it->path().c_str(), &entry) == 0 && S_ISDIR(entry.st_mode)) chmod(it->path().c_str(), 0700);
    }
    ec.clear();
  }
  fs::remove_all(path, ec);
  if (ec) return Status::Internal("removing " + path + ": " + ec.message());
  return Status::OK();
}

int CleanPythonModulesCache(const std::string& cache, int64_t now_seconds, int64_t max_idle_seconds) {
  std::error_code ec;
  std::vector<std::string> names;
  for (const auto& entry : fs::directory_iterator(cache, ec)) names.push_back(entry.path().filename().string());
  if (ec) return 0;
  int removed = 0;
  for (const std::string& name : names) {
    std::string key;
    if (IsKey(name)) key = name;
    else if (StartsWith(name, ".staging-") || StartsWith(name, ".trash-"))
      key = name.substr(name.find('-') + 1, 64);
    if (!IsKey(key)) continue;
    std::string install_lock = cache + "/" + key + ".install.lock";
    std::string use_lock = cache + "/" + key + ".use.lock";
    if (name != key) {
      // A leftover: removable once nobody installs its key.
      int fd = LockFile(install_lock, LOCK_EX, false, false);
      if (fd < 0) continue;
      (void)RemoveTree(cache + "/" + name);
      close(fd);
      continue;
    }
    struct stat st;
    if (stat(use_lock.c_str(), &st) != 0 && stat((cache + "/" + key).c_str(), &st) != 0) continue;
    if (now_seconds - static_cast<int64_t>(st.st_mtime) < max_idle_seconds) continue;
    int install_fd = LockFile(install_lock, LOCK_EX, false, false);
    if (install_fd < 0) continue;
    int use_fd = LockFile(use_lock, LOCK_EX, false, false);
    if (use_fd < 0) {
      close(install_fd);
      continue;
    }
    std::string trash = cache + "/.trash-" + key + "-" + std::to_string(getpid());
    if (rename((cache + "/" + key).c_str(), trash.c_str()) == 0) {
      if (RemoveTree(trash).ok()) ++removed;
    }
    // Unlinked while held: whoever opens them next gets new files (LockFile checks).
    unlink(use_lock.c_str());
    unlink(install_lock.c_str());
    close(use_fd);
    close(install_fd);
  }
  return removed;
}

int RunPythonModules(int argc, char** argv) {
  std::map<std::string, std::string> option;
  bool kill_uid = false;
  int i = 2;
  for (; i < argc && std::strcmp(argv[i], "--") != 0; ++i) {
    std::string name = argv[i];
    if (name == "--kill-uid") {
      kill_uid = true;
      continue;
    }
    if (i + 1 >= argc) break;
    option[name] = argv[++i];
  }
  const std::string exit_code_path = option["--exit-code"];
  for (const char* required : {"--cache", "--python", "--runtime", "--spec", "--drop"}) {
    if (option[required].empty() || i >= argc) {
      Say("usage: openglue __python-modules --cache DIR --python PY --runtime DIR --spec FILE --run ID "
          "--exit-code FILE [--uid U [--kill-uid]] --drop N -- PROGRAM ARGS...");
      return Failed(exit_code_path, "the server started its helper wrongly", true);
    }
  }
  std::vector<std::string> rest(argv + i + 1, argv + argc);
  size_t drop = static_cast<size_t>(std::strtoul(option["--drop"].c_str(), nullptr, 10));
  if (rest.empty() || drop >= rest.size()) return Failed(exit_code_path, "no program to run after --");
  const std::vector<std::string> as_user(rest.begin(), rest.begin() + static_cast<long>(drop));
  const std::string cache = option["--cache"];
  const std::string run_id = option["--run"];
  std::optional<uid_t> uid;
  if (!option["--uid"].empty()) uid = static_cast<uid_t>(std::strtoul(option["--uid"].c_str(), nullptr, 10));
  const char* tmpdir = std::getenv("TMPDIR");
  std::vector<std::string> pip_env = {
      "PIP_DISABLE_PIP_VERSION_CHECK=1", "PIP_NO_INPUT=1", "PYTHONNOUSERSITE=1",
      std::string("PIP_CACHE_DIR=") + (tmpdir ? tmpdir : "/tmp") + "/pip-cache"};
  auto python_command = [&](std::vector<std::string> tail) {
    std::vector<std::string> command = as_user;
    command.insert(command.end(), {option["--python"], "-I", "-c", kLaunch, option["--runtime"]});
    command.insert(command.end(), tail.begin(), tail.end());
    return command;
  };

  // 1. The set's key, computed as the run's user (who may read the files the set names).
  std::string key_output;
  int key_status = RunChild(python_command({"key", option["--spec"]}), pip_env, &key_output);
  if (key_status != 0)
    return Failed(exit_code_path, "the set's key could not be computed (status " + std::to_string(key_status) + ")",
                  key_status > 0 && key_status < 128);
  Json answer = ParseJson(key_output);
  std::string key = answer.is_object() && answer.contains("key") && answer["key"].is_string()
                        ? answer["key"].get<std::string>() : "";
  if (!IsKey(key)) return Failed(exit_code_path, "the set's key could not be computed");
  std::string what = answer.value("summary", std::string("the set"));
  const std::string short_key = key.substr(0, 12);

  // 2. The cache folder: the server's user's, traverse-only for others.
  if (mkdir(cache.c_str(), 0711) != 0 && errno != EEXIST)
    return Failed(exit_code_path, "cannot create " + cache + ": " + ErrnoText(errno));
  struct stat cache_st;
  if (lstat(cache.c_str(), &cache_st) != 0 || !S_ISDIR(cache_st.st_mode) || cache_st.st_uid != geteuid())
    return Failed(exit_code_path, cache + " is not a folder of the server's user");
  chmod(cache.c_str(), 0711);
  const std::string env_dir = cache + "/" + key;
  const std::string site = env_dir + "/site";

  // 3. One installer per key at a time; the others wait, then find it installed.
  int install_fd = LockFile(cache + "/" + key + ".install.lock", LOCK_EX, false, false);
  if (install_fd < 0 && (errno == EWOULDBLOCK || errno == EAGAIN)) {
    Say(std::string(kPrefix) + "another run is installing environment " + short_key + " (" + what +
        "); waiting for it");
    install_fd = LockFile(cache + "/" + key + ".install.lock", LOCK_EX, true, false);
  }
  if (install_fd < 0) return Failed(exit_code_path, "cannot lock " + cache + "/" + key + ".install.lock: " + ErrnoText(errno));

  // 4. An environment that is there is used only once it matches its manifest.
  bool reused = false;
  size_t files = 0;
  auto started = std::chrono::steady_clock::now();
  struct stat env_st;
  if (lstat(env_dir.c_str(), &env_st) == 0) {
    Result<Json> manifest = ReadJsonFile(env_dir + "/manifest.json");
    Status verified = manifest.ok() ? VerifyManifest(site, *manifest) : manifest.status();
    if (!S_ISDIR(env_st.st_mode) || env_st.st_uid != geteuid())
      verified = Status::InvalidInput(env_dir + " is not a folder of the server's user");
    if (verified.ok()) {
      reused = true;
      files = (*manifest)["entries"].size();
      Say(std::string(kPrefix) + "reusing environment " + short_key + " (" + what + "; installed " +
          Iso8601(manifest->value("created", int64_t{0})) + " by run " +
          manifest->value("run", std::string("?")) + "): " + std::to_string(files) +
          " entries verified by SHA-256 in " + Seconds(SecondsSince(started)));
    } else {
      Say(std::string(kPrefix) + "environment " + short_key + " failed verification (" +
          verified.message() + "); removing it and installing it again");
      std::string trash = cache + "/.trash-" + key + "-" + std::to_string(getpid());
      if (rename(env_dir.c_str(), trash.c_str()) != 0)
        return Failed(exit_code_path, "cannot remove the damaged environment " + env_dir + ": " + ErrnoText(errno));
      (void)RemoveTree(trash);
    }
  }

  // 5. Otherwise pip installs it into a staging folder as the run's user, which is then sealed,
  //    listed in its manifest and renamed into place.
  if (!reused) {
    RemoveLeftovers(cache, key);
    const std::string staging = cache + "/.staging-" + key + "-" + std::to_string(getpid());
    auto discard = [&](const std::string& reason, bool said) {
      (void)RemoveTree(staging);
      close(install_fd);
      return Failed(exit_code_path, reason, said);
    };
    if (mkdir(staging.c_str(), 0700) != 0) return discard("cannot create " + staging + ": " + ErrnoText(errno), false);
    if (uid && chown(staging.c_str(), *uid, static_cast<gid_t>(*uid)) != 0)
      return discard("cannot give " + staging + " to the run's user: " + ErrnoText(errno), false);
    Say(std::string(kPrefix) + "installing " + what + " into a new environment " + short_key + " with pip");
    int status = RunChild(python_command({"install", option["--spec"], staging + "/site"}), pip_env, nullptr);
    // Nothing pip (or a package's build) started may outlive it: it could still write.
    if (uid && kill_uid) KillUid(*uid);
    if (status != 0) return discard("pip ended with status " + std::to_string(status), status > 0 && status < 128);
    if (mkdir((staging + "/site").c_str(), 0755) != 0 && errno != EEXIST)
      return discard("cannot create " + staging + "/site: " + ErrnoText(errno), false);
    Status sealed = SealTree(staging, geteuid(), getegid());
    if (!sealed.ok()) return discard(sealed.message(), false);
    Result<Json> manifest = BuildManifest(staging + "/site");
    if (!manifest.ok()) return discard(manifest.status().message(), false);
    files = (*manifest)["entries"].size();
    (*manifest)["format"] = 1;
    (*manifest)["key"] = key;
    (*manifest)["created"] = static_cast<int64_t>(std::time(nullptr));
    (*manifest)["run"] = run_id;
    (*manifest)["summary"] = what;
    Status written = WriteFileExclusive(staging + "/manifest.json", DumpJson(*manifest), 0644);
    if (!written.ok()) return discard(written.message(), false);
    if (rename(staging.c_str(), env_dir.c_str()) != 0)
      return discard("cannot put the environment in place at " + env_dir + ": " + ErrnoText(errno), false);
    if (int dir_fd = open(cache.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC); dir_fd >= 0) {
      fsync(dir_fd);
      close(dir_fd);
    }
    uint64_t bytes = 0;
    for (const Json& entry : (*manifest)["entries"])
      if (entry.size() == 5 && entry[3].is_number_unsigned()) bytes += entry[3].get<uint64_t>();
    Say(std::string(kPrefix) + "environment " + short_key + " installed: " + std::to_string(files) +
        " entries, " + std::to_string(bytes / 1024) + " KiB, in " + Seconds(SecondsSince(started)));
  }

  // 6. The run uses it: a shared lock kept for the run's life (the cleaner leaves it alone),
  //    and the environment's last use recorded.
  int use_fd = LockFile(cache + "/" + key + ".use.lock", LOCK_SH, true, true);
  if (use_fd < 0) {
    close(install_fd);
    return Failed(exit_code_path, "cannot lock " + cache + "/" + key + ".use.lock: " + ErrnoText(errno));
  }
  futimens(use_fd, nullptr);
  close(install_fd);

  std::vector<std::string> env;
  bool has_path = false;
  for (char** e = environ; *e != nullptr; ++e) {
    std::string entry = *e;
    if (StartsWith(entry, "PYTHONPATH=")) {
      has_path = true;
      entry += (entry.size() > 11 ? ":" : "") + site;
    }
    if (StartsWith(entry, "OPENGLUE_PYTHON_MODULES=")) continue;
    env.push_back(entry);
  }
  if (!has_path) env.push_back("PYTHONPATH=" + site);
  env.push_back("OPENGLUE_PYTHON_MODULES=" + site);
  std::vector<char*> envp;
  for (std::string& e : env) envp.push_back(e.data());
  envp.push_back(nullptr);
  std::vector<char*> program;
  for (std::string& a : rest) program.push_back(a.data());
  program.push_back(nullptr);
  execve(program[0], program.data(), envp.data());
  return Failed(exit_code_path, "cannot run " + rest[0] + ": " + ErrnoText(errno));
}

}  // namespace openglue::jobs
