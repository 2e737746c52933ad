#include "jobs/run_sandbox.h"

#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <pwd.h>
#include <spawn.h>
#include <sys/wait.h>
#include <sys/stat.h>
#include <sys/xattr.h>
#include <unistd.h>

#include <cstring>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "common/logging.h"
#include "common/strings.h"

extern char** environ;

namespace openglue::jobs {
namespace {

// Linux's POSIX ACL extended-attribute format (linux/posix_acl_xattr.h), little-endian.
enum AclTag : uint16_t {
  kUserObj = 0x01, kGroupObj = 0x04, kGroup = 0x08, kMask = 0x10, kOther = 0x20
};
constexpr uint32_t kUndefinedId = 0xffffffffu;

void Put16(std::string* out, uint16_t v) {
  out->push_back(static_cast<char>(v & 0xff));
  out->push_back(static_cast<char>(v >> 8));
}
void Put32(std::string* out, uint32_t v) {
  for (int i = 0; i < 4; ++i) out->push_back(static_cast<char>((v >> (8 * i)) & 0xff));
}

// An ACL: owner, owning group and others as given, plus group `gid` with `group_perm`.
std::string MakeAcl(unsigned owner, unsigned group, gid_t gid, unsigned group_perm,
                    unsigned other) {
  std::string acl;
  Put32(&acl, 2);  // POSIX_ACL_XATTR_VERSION
  auto entry = [&acl](uint16_t tag, unsigned perm, uint32_t id) {
    Put16(&acl, tag);
    Put16(&acl, static_cast<uint16_t>(perm & 7));
    Put32(&acl, id);
  };
  entry(kUserObj, owner, kUndefinedId);
  entry(kGroupObj, group, kUndefinedId);
  entry(kGroup, group_perm, gid);
  entry(kMask, group | group_perm, kUndefinedId);
  entry(kOther, other, kUndefinedId);
  return acl;
}

gid_t g_shared_gid = 0;  // for the nftw callback (PrepareDataDir runs once, at startup)

// Gives the shared group read and write (and search on folders) on one object-store entry.
Status ShareEntry(const char* path, const struct stat& st) {
  if (S_ISLNK(st.st_mode)) return Status::OK();
  unsigned mode = st.st_mode & 0777;
  bool dir = S_ISDIR(st.st_mode);
  unsigned perm = dir || (mode & 0111) ? 7 : 6;
  std::string access = MakeAcl(mode >> 6, (mode >> 3) & 7, g_shared_gid, perm, mode & 7);
  if (setxattr(path, "system.posix_acl_access", access.data(), access.size(), 0) != 0)
    return Status::Internal(std::string("setting an ACL on ") + path + ": " + std::strerror(errno));
  if (dir) {
    std::string inherited = MakeAcl(7, 7, g_shared_gid, 7, 0);
    if (setxattr(path, "system.posix_acl_default", inherited.data(), inherited.size(), 0) != 0)
      return Status::Internal(std::string("setting a default ACL on ") + path + ": " +
                              std::strerror(errno));
  }
  return Status::OK();
}

Status g_walk_status;

int ShareVisit(const char* path, const struct stat* st, int type, struct FTW*) {
  if (type == FTW_NS || type == FTW_DNR) return 0;
  Status s = ShareEntry(path, *st);
  if (!s.ok()) {
    g_walk_status = s;
    return 1;
  }
  return 0;
}

uid_t g_chown_uid = 0;
gid_t g_chown_gid = 0;

int ChownVisit(const char* path, const struct stat*, int, struct FTW*) {
  if (lchown(path, g_chown_uid, g_chown_gid) != 0) {
    g_walk_status = Status::Internal(std::string("chown ") + path + ": " + std::strerror(errno));
    return 1;
  }
  return 0;
}

Status Chmod(const std::string& path, mode_t mode) {
  if (chmod(path.c_str(), mode) != 0 && errno != ENOENT)
    return Status::Internal("chmod " + path + ": " + std::strerror(errno));
  return Status::OK();
}

}  // namespace

Result<JobUserOptions> ResolveJobUser(const std::string& job_user, int64_t uid_base,
                                      int64_t uid_count) {
  JobUserOptions user;
  bool root = geteuid() == 0;
  if (job_user == "none" || (job_user == "auto" && !root)) return user;
  if (job_user == "auto") {
    user.enabled = true;
    user.per_run = true;
    user.uid_base = static_cast<uid_t>(uid_base);
    user.uid_count = static_cast<uint32_t>(uid_count);
    user.shared_gid = static_cast<gid_t>(uid_base);
    return user;
  }
  if (!root)
    return Status::InvalidInput("job_user '" + job_user +
                                "' needs the server to run as root (or set job_user = none)");
  struct passwd pw, *found = nullptr;
  std::vector<char> buf(16384);
  if (getpwnam_r(job_user.c_str(), &pw, buf.data(), buf.size(), &found) != 0 || !found)
    return Status::InvalidInput("job_user '" + job_user + "' is not a user of this machine");
  if (pw.pw_uid == 0) return Status::InvalidInput("job_user must not be root");
  user.enabled = true;
  user.per_run = false;
  user.fixed_uid = pw.pw_uid;
  user.fixed_gid = pw.pw_gid;
  user.shared_gid = pw.pw_gid;
  return user;
}

Status ChownTree(const std::string& path, uid_t uid, gid_t gid, mode_t mode) {
  g_chown_uid = uid;
  g_chown_gid = gid;
  g_walk_status = Status::OK();
  // FTW_PHYS: symlinks are not followed (lchown changes the link itself).
  if (nftw(path.c_str(), ChownVisit, 16, FTW_PHYS) != 0 && g_walk_status.ok())
    return Status::Internal("walking " + path + ": " + std::strerror(errno));
  OG_RETURN_NOT_OK(g_walk_status);
  return Chmod(path, mode);
}

Status PrepareDataDir(const std::string& data_dir, const JobUserOptions& user) {
  if (!user.enabled) return Status::OK();
  namespace fs = std::filesystem;
  std::error_code ec;
  fs::path root = fs::absolute(data_dir, ec);
  // The job user must be able to walk down to <data_dir>/s3 and its run folder.
  for (fs::path p = root.parent_path(); !p.empty() && p != p.root_path(); p = p.parent_path()) {
    struct stat st;
    if (stat(p.c_str(), &st) == 0 && (st.st_mode & S_IXOTH) == 0)
      return Status::InvalidInput(
          "job processes run as an unprivileged user but cannot reach the data folder through " +
          p.string() + " (mode " + std::to_string((st.st_mode >> 6) & 7) +
          std::to_string((st.st_mode >> 3) & 7) + std::to_string(st.st_mode & 7) +
          "): make it traversable (chmod o+x), choose another data_dir, or set job_user = none");
  }
  for (const char* dir : {"runs", "s3", "logs"}) fs::create_directories(root / dir, ec);
  // Traverse-only: a job can reach s3/ and its own run folder, not list or read the rest.
  OG_RETURN_NOT_OK(Chmod(root.string(), 0711));
  OG_RETURN_NOT_OK(Chmod((root / "runs").string(), 0711));
  OG_RETURN_NOT_OK(Chmod((root / "logs").string(), 0700));
  for (const char* file : {"catalog.db", "catalog.db-wal", "catalog.db-shm", "catalog.db-journal",
                           "server.key", "connection.key"})
    OG_RETURN_NOT_OK(Chmod((root / file).string(), 0600));
  // The object store: shared by every run through the group's ACL entries. A fresh store (no
  // default ACL yet) is walked once; later files inherit the default ACL when created.
  std::string s3 = (root / "s3").string();
  if (chown(s3.c_str(), 0, user.shared_gid) != 0)
    return Status::Internal("chown " + s3 + ": " + std::strerror(errno));
  OG_RETURN_NOT_OK(Chmod(s3, 02770));
  g_shared_gid = user.shared_gid;
  std::string existing(256, '\0');
  ssize_t n = getxattr(s3.c_str(), "system.posix_acl_default", existing.data(), existing.size());
  std::string wanted = MakeAcl(7, 7, user.shared_gid, 7, 0);
  if (n != static_cast<ssize_t>(wanted.size()) || existing.compare(0, n, wanted) != 0) {
    g_walk_status = Status::OK();
    if (nftw(s3.c_str(), ShareVisit, 16, FTW_PHYS) != 0 && g_walk_status.ok())
      return Status::Internal("walking " + s3 + ": " + std::strerror(errno));
    if (!g_walk_status.ok())
      return Status::InvalidInput(g_walk_status.message() +
                                  " (the object store needs a file system with POSIX ACLs, or "
                                  "set job_user = none)");
  }
  return Status::OK();
}

Status CheckJobUserCanRun(const std::string& python, const JobUserOptions& user) {
  if (!user.enabled) return Status::OK();
  uid_t uid = user.per_run ? user.uid_base + 1 : user.fixed_uid;
  gid_t gid = user.per_run ? static_cast<gid_t>(uid) : user.fixed_gid;
  std::vector<std::string> args = {"setpriv", "--reuid=" + std::to_string(uid),
                                   "--regid=" + std::to_string(gid),
                                   "--groups=" + std::to_string(user.shared_gid),
                                   "--inh-caps=-all", "--no-new-privs", "--", python, "-c", "pass"};
  std::vector<char*> argv;
  for (std::string& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_addopen(&actions, 1, "/dev/null", O_WRONLY, 0);
  posix_spawn_file_actions_addopen(&actions, 2, "/dev/null", O_WRONLY, 0);
  posix_spawn_file_actions_addchdir_np(&actions, "/");
  pid_t pid = -1;
  int rc = posix_spawnp(&pid, "setpriv", &actions, nullptr, argv.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  if (rc != 0)
    return Status::InvalidInput(std::string("cannot run setpriv (util-linux), needed to run jobs "
                                            "as another user: ") + std::strerror(rc) +
                                " (or set job_user = none)");
  int status = 0;
  while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  if (WIFEXITED(status) && WEXITSTATUS(status) == 0) return Status::OK();
  return Status::InvalidInput(
      "job processes run as unprivileged uids (job_user = " +
      std::string(user.per_run ? "auto" : "a named user") + ") but uid " + std::to_string(uid) +
      " cannot start the interpreter '" + python +
      "': it, or a folder above it, is not open to others (pyenv under /root is the usual case). "
      "Grant the job group search permission (e.g. setfacl -m g:" +
      std::to_string(user.shared_gid) + ":x /root), set `python` to an interpreter outside "
      "such folders, or set job_user = none");
}

std::string FindCgroupRoot() {
  std::ifstream mounts("/proc/self/mounts");
  std::string line, mount_point;
  while (std::getline(mounts, line)) {
    std::vector<std::string> fields = Split(line, ' ');
    if (fields.size() >= 3 && fields[2] == "cgroup2") {
      mount_point = fields[1];
      break;
    }
  }
  if (mount_point.empty()) return "";
  std::ifstream self("/proc/self/cgroup");
  std::string own;
  while (std::getline(self, line))
    if (StartsWith(line, "0::")) own = line.substr(3);
  if (own == "/") own.clear();
  std::string root = mount_point + own + "/openglue-runs";
  // The wrapper script quotes the path in single quotes.
  if (root.find('\'') != std::string::npos) return "";
  if (mkdir(root.c_str(), 0755) != 0 && errno != EEXIST) return "";
  if (access((root + "/cgroup.procs").c_str(), W_OK) != 0) return "";
  // cgroup.kill (Linux 5.14) is what makes containment whole.
  std::string probe = root + "/probe-" + std::to_string(getpid());
  if (mkdir(probe.c_str(), 0755) != 0) return "";
  bool has_kill = access((probe + "/cgroup.kill").c_str(), W_OK) == 0;
  rmdir(probe.c_str());
  return has_kill ? root : "";
}

}  // namespace openglue::jobs
