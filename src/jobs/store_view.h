// Store view: what a job run sees of the object store folder <data_dir>/s3, which job processes
// reach on the file system (OPENGLUE_S3_ROOT) beside the S3 API.
//
// When runs run under uids of their own (the server is root), each run starts in a mount
// namespace of its own where the store folder is re-mounted to match its Role's `s3:` grants
// (StoreGrants, from the policy) and where the folders holding jobs' code are read-only:
//   - read everything, write everything (the default Role): the store as it is;
//   - read everything, write some prefixes: the store read-only, those prefixes writable;
//   - read some: an empty read-only folder with the granted prefixes (read-only, or writable)
//     and single objects (read-only) mounted into it;
//   - then every existing folder that holds a job's code (the folder of a ScriptLocation or of
//     an --extra-py-files entry, ...; for code at a bucket's top level, that object alone) and
//     lies in a writable part is mounted read-only, and each folder above it, up to its bucket,
//     is mounted onto itself, so that none of them can be renamed (EBUSY) and nothing can be
//     moved into them from elsewhere (EXDEV).
// The folder route grants by folder: a resource pattern counts only as `bucket/prefix/*` (a
// folder and everything under it) or as one exact object (read-only); other patterns are left
// to the S3 API, whose gate matches them exactly. Write access means s3:PutObject.
//
// A code folder that is missing is made (inside an existing bucket) so that it is protected before
// anything is put there. When a job names new code while runs run (CreateJob, UpdateJob), the
// server adds the same protection to each running run's view (RunStorePin), so code is protected
// from the moment a job names it, on this route as on the S3 API.
//
// The view is set up by the server's own binary, run as root between the cgroup's shell and
// setpriv: `openglue __store-view STORE MODE [r|o|w|c|f REL]... -- PROGRAM ARGS...` unshares the mount
// namespace, mounts, and execs PROGRAM (RunStoreView). Its argv is built by StoreViewArgs.
#pragma once

#include <map>
#include <string>
#include <vector>

namespace openglue::jobs {

// What a Role may reach of the store folder, as paths relative to it ("bucket/prefix").
struct StoreGrants {
  bool read_all = true;
  bool write_all = true;
  std::vector<std::string> read_folders;
  std::vector<std::string> read_objects;
  std::vector<std::string> write_folders;
};

// The arguments after `__store-view` up to and including "--": the view for `grants` over
// `store` (an absolute path), with the folders of `code` ("bucket/key" or "bucket/prefix/", as
// JobService::CodeObjects) protected.
std::vector<std::string> StoreViewArgs(const std::string& store, const StoreGrants& grants,
                                       const std::map<std::string, std::string>& code);

// The pin entries of StoreViewArgs for `code` ("c" folder / "f" object, relative path, ...).
std::vector<std::string> CodePinArgs(const std::map<std::string, std::string>& code);

// `openglue __store-pin PID STORE [c|f REL]...`: protects jobs' code (as the view does) in the
// mount namespace of the running process PID, a run's, when a job names new code while the run
// runs (JobService calls it through ProcessLauncher::ProtectCode). Refuses the server's own
// namespace. 0, or 126 with the reason on stderr.
int RunStorePin(int argc, char** argv);

// The `__store-view` helper's main: argv[0] is the binary, argv[1] "__store-view". Sets up the
// view and execs the program after "--"; on failure writes why to stderr and returns 126 (the
// run then fails with that message in its error log).
int RunStoreView(int argc, char** argv);

}  // namespace openglue::jobs
