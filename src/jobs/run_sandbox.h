// Run sandbox: who a job process runs as, which files it can reach, and the cgroup that holds
// every process it starts.
//
// When the server runs as root (and `job_user` is "auto"), each run gets a uid of its own from
// [uid_base + 1, uid_base + uid_count] (no /etc/passwd entry needed) with the object store's
// shared group (gid uid_base) as its only supplementary group. Its run folder belongs to that
// uid (0700); the data folder is traverse-only (0711), the metadata store, the server key and the
// logs are the server's alone (0600/0700), and <data_dir>/s3 is shared through group ACLs
// (a default ACL, so objects created by anyone, root included, stay readable and writable by
// every run). A named `job_user` runs every job as that one user instead (runs are then not
// isolated from each other). Without root, jobs run as the server's user.
//
// Containment: with a writable cgroup v2 hierarchy, every run's process tree lives in its own
// cgroup (<root>/run-<pid>) and is killed whole (cgroup.kill) when the run ends, is stopped or
// times out, including processes that left the process group with setsid(). Without one (not
// root, no cgroup2), only the process group is signalled (best effort).
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <string>

#include "common/status.h"

namespace openglue::jobs {

struct JobUserOptions {
  bool enabled = false;        // run jobs under another uid (needs root)
  bool per_run = true;         // a distinct uid per run (else fixed_uid for all)
  uid_t uid_base = 0;          // per_run: uids uid_base + 1 .. uid_base + uid_count
  uint32_t uid_count = 0;
  gid_t shared_gid = 0;        // group of the object store; a supplementary group of every run
  uid_t fixed_uid = 0;         // !per_run: the named user
  gid_t fixed_gid = 0;
};

// From the config: "auto" (per-run uids when root, else disabled), "none", or a user name
// (root only). InvalidInput for an unknown user, or a user name without root.
Result<JobUserOptions> ResolveJobUser(const std::string& job_user, int64_t uid_base,
                                      int64_t uid_count);

// Sets the data folder's permissions for `user` (nothing when !user.enabled): see the header
// comment. Fails when the job user could not reach the data folder (an ancestor folder is not
// traversable by others), naming the folder.
Status PrepareDataDir(const std::string& data_dir, const JobUserOptions& user);

// The cgroup v2 folder under which runs get their cgroups, created if needed; empty when the
// machine has no writable cgroup v2 hierarchy (then containment is by process group only).
std::string FindCgroupRoot();

// Starts `python -c pass` as the job user (nothing when !user.enabled) so that a server whose
// jobs could never start says so at once: InvalidInput naming the interpreter and the remedies
// (an interpreter under a folder only root may enter, such as pyenv in /root, is the usual
// case).
Status CheckJobUserCanRun(const std::string& python, const JobUserOptions& user);

// Gives the tree under `path` (not following symlinks) to uid:gid; `path` itself gets `mode`.
Status ChownTree(const std::string& path, uid_t uid, gid_t gid, mode_t mode);

}  // namespace openglue::jobs
