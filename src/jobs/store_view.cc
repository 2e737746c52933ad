#include "jobs/store_view.h"

#include <fcntl.h>
#include <sched.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <set>

#include "common/strings.h"

extern char** environ;

namespace openglue::jobs {
namespace {

size_t Depth(const std::string& rel) { return static_cast<size_t>(std::count(rel.begin(), rel.end(), '/')); }

// A path relative to the store is refused unless every segment is an ordinary name.
bool PlainRelative(const std::string& rel) {
  if (rel.empty()) return false;
  for (const std::string& segment : Split(rel, '/'))
    if (segment.empty() || segment == "." || segment == "..") return false;
  return true;
}

std::string FdPath(int fd) { return "/proc/self/fd/" + std::to_string(fd); }

int Fail(const std::string& what, const std::string& path) {
  std::fprintf(stderr, "openglue: cannot set up the run's view of the object store (%s %s: %s)\n",
               what.c_str(), path.c_str(), std::strerror(errno));
  return 126;
}

// Opens `rel` below the directory `root` one segment at a time, never following a symbolic link
// (a job may have planted one); creates missing folders when `create`. -1 when a segment is
// missing (and !create), is a link, or is not a folder (errno says which). `last_is_file`: the
// last segment is opened as a file (O_PATH).
int OpenBeneath(int root, const std::string& rel, bool create, bool last_is_file = false) {
  int fd = fcntl(root, F_DUPFD_CLOEXEC, 0);
  std::vector<std::string> segments = Split(rel, '/');
  for (size_t i = 0; i < segments.size() && fd >= 0; ++i) {
    const std::string& segment = segments[i];
    bool file = last_is_file && i + 1 == segments.size();
    int flags = O_PATH | O_NOFOLLOW | O_CLOEXEC | (file ? 0 : O_DIRECTORY);
    int next = openat(fd, segment.c_str(), flags);
    if (next < 0 && errno == ENOENT && create) {
      if (file) {
        int made = openat(fd, segment.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
        if (made >= 0) close(made);
      } else {
        mkdirat(fd, segment.c_str(), 0770);
      }
      next = openat(fd, segment.c_str(), flags);
    }
    int saved = errno;
    close(fd);
    errno = saved;
    fd = next;
  }
  return fd;
}

bool Bind(int source, int target) {
  std::string from = FdPath(source), to = FdPath(target);
  return mount(from.c_str(), to.c_str(), nullptr, MS_BIND | MS_REC, nullptr) == 0;
}

// Remounts the mount on top of `rel` (below the view's root `store`) read-only.
bool RemountReadOnly(const std::string& store, const std::string& rel, bool file = false) {
  int root = open(store.c_str(), O_PATH | O_DIRECTORY | O_CLOEXEC);
  if (root < 0) return false;
  int fd = rel.empty() ? fcntl(root, F_DUPFD_CLOEXEC, 0) : OpenBeneath(root, rel, false, file);
  close(root);
  if (fd < 0) return false;
  std::string path = FdPath(fd);
  bool ok = mount(nullptr, path.c_str(), nullptr, MS_REMOUNT | MS_BIND | MS_RDONLY, nullptr) == 0;
  int saved = errno;
  close(fd);
  errno = saved;
  return ok;
}

bool IsMountRoot(int fd) {
  struct statx st;
  if (statx(fd, "", AT_EMPTY_PATH, 0, &st) != 0) return false;
  return (st.stx_attributes_mask & STATX_ATTR_MOUNT_ROOT) && (st.stx_attributes & STATX_ATTR_MOUNT_ROOT);
}

// Jobs' code in the view at `store`: each folder read-only where it is writable, and every folder
// above it up to its bucket a mount of its own, so that nothing renames them or moves files into
// them. A missing code folder is made in the real store (`real`) first when its bucket exists, so
// that it is protected before anything is put there; a folder that is a mount's root already is
// not mounted again. 0, or Fail's code.
int PinCode(const std::string& store, int real, const std::vector<std::pair<std::string, std::string>>& entries) {
  auto view_root = [&]() { return open(store.c_str(), O_PATH | O_DIRECTORY | O_CLOEXEC); };
  for (const auto& [kind, rel] : entries) {
    if (kind != "c" && kind != "f") continue;
    const bool file = kind == "f";
    if (!file && rel.find('/') != std::string::npos) {
      std::string bucket = rel.substr(0, rel.find('/'));
      int bucket_fd = OpenBeneath(real, bucket, false);
      if (bucket_fd >= 0) {
        int made = OpenBeneath(bucket_fd, rel.substr(bucket.size() + 1), true);
        if (made >= 0) close(made);
        close(bucket_fd);
      }
    }
    int root = view_root();
    if (root < 0) return Fail("open", store);
    int folder = OpenBeneath(root, rel, false, file);
    close(root);
    if (folder < 0) continue;  // not there (or a link): nothing to protect in this view
    struct statvfs vfs;
    bool writable = fstatvfs(folder, &vfs) == 0 && !(vfs.f_flag & ST_RDONLY);
    close(folder);
    if (!writable) continue;
    std::vector<std::string> segments = Split(rel, '/');
    std::string prefix;
    for (size_t s = 0; s < segments.size(); ++s) {
      prefix += (s == 0 ? "" : "/") + segments[s];
      bool last = s + 1 == segments.size();
      int r = view_root();
      int fd = r < 0 ? -1 : OpenBeneath(r, prefix, false, last && file);
      if (r >= 0) close(r);
      if (fd < 0) return Fail("open in the view", store + "/" + prefix);
      if (!last && IsMountRoot(fd)) {
        close(fd);
        continue;
      }
      bool ok = Bind(fd, fd);
      close(fd);
      if (!ok) return Fail("bind", store + "/" + prefix);
      if (last && !RemountReadOnly(store, prefix, file)) return Fail("remount read-only", store + "/" + prefix);
    }
  }
  return 0;
}

}  // namespace

std::vector<std::string> CodePinArgs(const std::map<std::string, std::string>& code) {
  std::vector<std::string> out;
  // Code in a folder protects the folder; code at a bucket's top level protects that object
  // (so the rest of the bucket stays as the Role has it).
  std::vector<std::pair<std::string, std::string>> pins;  // kind, path
  for (const auto& [object, job] : code) {
    if (!object.empty() && object.back() == '/') {
      pins.emplace_back("c", object.substr(0, object.size() - 1));
    } else {
      size_t slash = object.rfind('/');
      if (object.find('/') == slash) pins.emplace_back("f", object);
      else pins.emplace_back("c", object.substr(0, slash));
    }
  }
  std::sort(pins.begin(), pins.end(), [](const auto& a, const auto& b) {
    return Depth(a.second) != Depth(b.second) ? Depth(a.second) < Depth(b.second) : a < b;
  });
  std::set<std::string> pinned;
  for (const auto& [kind, path] : pins)
    if (PlainRelative(path) && pinned.insert(path).second) out.insert(out.end(), {kind, path});
  return out;
}

std::vector<std::string> StoreViewArgs(const std::string& store, const StoreGrants& grants,
                                       const std::map<std::string, std::string>& code) {
  std::vector<std::string> args = {store};
  if (!grants.read_all) args.push_back("hidden");
  else if (!grants.write_all) args.push_back("ro");
  else args.push_back("rw");
  auto add = [&](const char* kind, const std::vector<std::string>& paths) {
    std::set<std::string> seen;
    for (const std::string& path : paths)
      if (PlainRelative(path) && seen.insert(path).second) args.insert(args.end(), {kind, path});
  };
  if (!grants.read_all) {
    add("r", grants.read_folders);
    add("o", grants.read_objects);
  }
  if (!grants.write_all) add("w", grants.write_folders);
  std::vector<std::string> pins = CodePinArgs(code);
  args.insert(args.end(), pins.begin(), pins.end());
  if (args.size() == 2 && args[1] == "rw") return {};  // nothing to change
  args.push_back("--");
  return args;
}

int RunStoreView(int argc, char** argv) {
  if (argc < 5) {
    std::fprintf(stderr, "usage: openglue __store-view STORE rw|ro|hidden [r|o|w|c|f REL]... -- PROGRAM ARGS...\n");
    return 126;
  }
  const std::string store = argv[2];
  const std::string mode = argv[3];
  std::vector<std::pair<std::string, std::string>> entries;
  int i = 4;
  for (; i + 1 < argc && std::strcmp(argv[i], "--") != 0; i += 2) entries.emplace_back(argv[i], argv[i + 1]);
  if (i >= argc || std::strcmp(argv[i], "--") != 0 || i + 1 >= argc) {
    std::fprintf(stderr, "openglue __store-view: no program after --\n");
    return 126;
  }
  char** program = argv + i + 1;
  if (mode != "rw" && mode != "ro" && mode != "hidden") {
    std::fprintf(stderr, "openglue __store-view: mode must be rw, ro or hidden\n");
    return 126;
  }
  if (unshare(CLONE_NEWNS) != 0) return Fail("unshare(CLONE_NEWNS)", "");
  if (mount(nullptr, "/", nullptr, MS_REC | MS_PRIVATE, nullptr) != 0) return Fail("make / private", "/");
  // The store as it is, whatever is mounted over its path below.
  int real = open(store.c_str(), O_PATH | O_DIRECTORY | O_CLOEXEC);
  if (real < 0) return Fail("open", store);
  if (mode == "ro") {
    if (mount(store.c_str(), store.c_str(), nullptr, MS_BIND | MS_REC, nullptr) != 0) return Fail("bind", store);
    if (!RemountReadOnly(store, "")) return Fail("remount read-only", store);
  } else if (mode == "hidden") {
    if (mount("openglue-store-view", store.c_str(), "tmpfs", MS_NOSUID | MS_NODEV, "mode=0755,size=1m") != 0)
      return Fail("mount an empty folder over", store);
  }
  auto view_root = [&]() { return open(store.c_str(), O_PATH | O_DIRECTORY | O_CLOEXEC); };
  // Grants: folders (and, hidden, single objects) of the real store mounted into the view.
  for (const auto& [kind, rel] : entries) {
    if (kind != "w" && kind != "r" && kind != "o") continue;
    bool file = kind == "o";
    // A writable folder is made in the store if missing (as an S3 prefix needs no folder).
    int source = OpenBeneath(real, rel, kind == "w", file);
    if (source < 0) continue;  // nothing there to grant (or a planted link): nothing mounted
    int root = view_root();
    int target = root < 0 ? -1 : OpenBeneath(root, rel, mode == "hidden", file);
    if (root >= 0) close(root);
    if (target < 0) {
      close(source);
      return Fail("open in the view", store + "/" + rel);
    }
    bool ok = Bind(source, target);
    close(source);
    close(target);
    if (!ok) return Fail("bind", store + "/" + rel);
    if (kind != "w" && !RemountReadOnly(store, rel, file)) return Fail("remount read-only", store + "/" + rel);
  }
  if (mode == "hidden" && !RemountReadOnly(store, "")) return Fail("remount read-only", store);
  if (int failed = PinCode(store, real, entries); failed != 0) return failed;
  close(real);
  execve(program[0], program, environ);
  return Fail("exec", program[0]);
}

int RunStorePin(int argc, char** argv) {
  if (argc < 4) {
    std::fprintf(stderr, "usage: openglue __store-pin PID STORE [c|f REL]...\n");
    return 126;
  }
  const std::string pid = argv[2];
  const std::string store = argv[3];
  std::vector<std::pair<std::string, std::string>> entries;
  for (int i = 4; i + 1 < argc; i += 2) entries.emplace_back(argv[i], argv[i + 1]);
  // Only another namespace: never the server's own (a pid reused by a process outside runs).
  struct stat own, theirs;
  std::string ns = "/proc/" + pid + "/ns/mnt";
  if (stat("/proc/self/ns/mnt", &own) != 0 || stat(ns.c_str(), &theirs) != 0) return Fail("stat", ns);
  if (own.st_ino == theirs.st_ino && own.st_dev == theirs.st_dev) {
    std::fprintf(stderr, "openglue __store-pin: process %s shares the server's mount namespace\n", pid.c_str());
    return 126;
  }
  int real = open(store.c_str(), O_PATH | O_DIRECTORY | O_CLOEXEC);  // the server's view: the store as it is
  if (real < 0) return Fail("open", store);
  int ns_fd = open(ns.c_str(), O_RDONLY | O_CLOEXEC);
  if (ns_fd < 0) return Fail("open", ns);
  // setns into a mount namespace needs a filesystem context of this thread's own (libraries
  // linked into the binary may have started threads that share it).
  if (unshare(CLONE_FS) != 0) return Fail("unshare(CLONE_FS)", "");
  if (setns(ns_fd, CLONE_NEWNS) != 0) return Fail("setns", ns);
  close(ns_fd);
  int failed = PinCode(store, real, entries);
  close(real);
  return failed;
}

}  // namespace openglue::jobs
