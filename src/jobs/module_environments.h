// Module environments: the cached environments of `--additional-python-modules` (docs/jobs.md,
// "Additional Python modules").
//
// One environment per requirement set, in the cache folder <data_dir>/python-modules/:
//   <key>/site/           the layer on the run's PYTHONPATH (pip --target; only what the
//                         runtime lacks)
//   <key>/manifest.json   every entry of site/: its type, mode, size and SHA-256
//   <key>.install.lock    flock(LOCK_EX) by the one run installing or verifying <key>
//   <key>.use.lock        flock(LOCK_SH) by every run using <key>, for as long as the run
//                         lives (the descriptor goes with the run's process); its mtime is the
//                         environment's last use
//   .staging-<key>-<pid>  an installation in progress (one killed midway is removed by the next
//                         installer of <key>, or by the cleaner)
// The key (64 hex digits) is computed by openglue_runtime.python_modules as the run's user: the
// SHA-256 of the interpreter, the runtime's distributions, the normalised requirement specs,
// the files' contents and the installer options.
//
// Trust: the environment is written only while it is a staging folder, by pip running as the
// run's own uid before the run's script starts; then every process of that uid is killed, the
// tree is given to the server's user (root when runs have uids of their own) with no write
// permission for anyone else, its manifest is written, and it is renamed into place. A run can
// read its environment but never write it, nor any other one; every run verifies the tree
// against the manifest (every file's SHA-256) before using it, and an environment that fails is
// removed and installed again.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <string>

#include "common/json.h"
#include "common/status.h"

namespace openglue::jobs {

// The manifest of the tree under `site`: {"entries": [[rel, "d", mode] | [rel, "f", mode, size,
// sha256] | [rel, "l", target], ...]} sorted by path. InvalidInput for what an environment may
// not hold (a device, fifo or socket; a regular file with more than one hard link, which could
// be another file of the machine's), Internal for I/O errors; each names the path.
Result<Json> BuildManifest(const std::string& site);

// OK when the tree under `site` is exactly `manifest` (BuildManifest's); else InvalidInput
// naming the first difference ("site/x.py: content differs", "site/y: not in the manifest").
Status VerifyManifest(const std::string& site, const Json& manifest);

// Gives the tree under `root` (not following symlinks) to owner:group and takes every write
// permission from group and others (and setuid/setgid/sticky bits from all): folders 0755,
// files 0644, or 0755 when any execute bit was set. InvalidInput for a special file or a
// hard-linked regular file (as BuildManifest).
Status SealTree(const std::string& root, uid_t owner, gid_t group);

// Removes `path` and everything under it, not following symlinks. OK when it does not exist.
Status RemoveTree(const std::string& path);

// Removes the environments of `cache` not used for `max_idle_seconds` (by the mtime of their
// use lock) that no run uses and none installs (both locks taken without waiting), and the
// staging and trash folders no installer holds. Returns how many environments it removed.
// Best effort: what cannot be removed now is left for the next call.
int CleanPythonModulesCache(const std::string& cache, int64_t now_seconds, int64_t max_idle_seconds);

// The `openglue __python-modules` helper, run between the run's cgroup (and store view) and the
// drop to the run's uid:
//   openglue __python-modules --cache DIR --python PY --runtime DIR --spec FILE --run ID
//       --exit-code FILE [--uid U [--kill-uid]] --drop N -- PROGRAM ARGS...
// where the first N arguments of PROGRAM ARGS drop to the run's user (setpriv ... --) and are
// also used to run pip as that user; --uid is that user, to give it the staging folder; with
// --kill-uid every process of that uid is killed once pip ends. It computes the set's key,
// takes the install lock, reuses a verified environment or installs a new one, takes the use
// lock (kept open for the run), and execs PROGRAM with the layer appended to PYTHONPATH and
// named by OPENGLUE_PYTHON_MODULES. Each step is written to stderr (the run's error log). When
// the set cannot be installed it writes 1 to the exit-code file (so the run ends FAILED with
// the last line of its error log, which says why) and returns 1, leaving nothing in the cache.
int RunPythonModules(int argc, char** argv);

}  // namespace openglue::jobs
