// ResolveArrowPath: what an `s3://`, `file://` or plain path means for Arrow's filesystem layer.
//
// The engine reads and writes data through arrow::fs::FileSystem. This is the one place that
// turns a user's path into a filesystem plus a path inside it, under the storage options the
// runtime was given (awsglue.storage_options(): `s3_root` for the embedded store, or an
// `endpoint` with credentials for an S3-compatible server).
//
//   s3://bucket/key (also s3a://, s3n://)
//     with s3_root:  a SubTreeFileSystem rooted at realpath(s3_root) over the local disk,
//                    path "bucket/key". Confinement: keys with an empty segment (a leading '/',
//                    "a//b"; one trailing '/' is allowed and dropped: "s3://b/out/" is the
//                    prefix "out"), a "." or ".." segment are refused; the real path of the
//                    nearest existing ancestor of <root>/bucket/key must lie under the real root
//                    (a symlink inside the store that leads outside it is refused).
//                    Residual race: the check happens at resolution time; a symlink planted in
//                    the store after it (by someone who can already write inside the store)
//                    can still redirect a later open. Whoever can write the store can already
//                    change its data; the store's own S3 server does not create symlinks.
//     with endpoint: Arrow's S3FileSystem (endpoint_override and scheme from the URL, path-style
//                    addressing, the given access key / secret / session token, region default
//                    us-east-1), path "bucket/key". S3 is initialised once per process
//                    (EnsureS3Initialized); the process calls FinalizeArrowS3() before it exits
//                    (the Python module registers it with Python's atexit, as pyarrow does: a
//                    C atexit handler aborts inside the AWS SDK's teardown).
//     with neither:  InvalidInput.
//   file:///abs/path, plain paths   LocalFileSystem, the absolute path.
//
// Errors: InvalidInput naming the uri (bad scheme, bad bucket, refused key, escaping symlink,
// missing s3_root folder, malformed endpoint); Internal for an Arrow failure creating the
// filesystem. Thread-safe.
#pragma once

#include <map>
#include <memory>
#include <string>
#include <string_view>

#include <arrow/filesystem/type_fwd.h>

#include "common/status.h"

namespace openglue::storage {

struct StorageOptions {
  std::string s3_root;        // embedded store folder: s3://b/k -> <s3_root>/b/k
  std::string endpoint;       // e.g. http://127.0.0.1:4691 (used when s3_root is empty)
  std::string access_key;
  std::string secret_key;
  std::string session_token;  // optional
  std::string region;         // optional, default us-east-1

  // From the Python dict (keys as the field names; unknown keys ignored).
  static StorageOptions FromMap(const std::map<std::string, std::string>& map);
};
// The same, as a free function (CONTRACT.md's spelling).
StorageOptions FromMap(const std::map<std::string, std::string>& map);

struct ResolvedPath {
  std::shared_ptr<arrow::fs::FileSystem> fs;
  std::string path;  // the path inside `fs` (no trailing '/')
  std::string uri;   // how to name it to a user: "s3://bucket/key", "file:///x" or "/x"
  bool is_object_store = false;  // true for S3FileSystem: no directories, no cheap rename
};

Result<ResolvedPath> ResolveArrowPath(std::string_view uri, const StorageOptions& options);

// Shuts Arrow's S3 support down if it was started (idempotent; thread-safe). After it, endpoint
// paths fail with Internal. Call once before process exit when endpoint paths were resolved.
void FinalizeArrowS3();

// `base` joined with a relative, '/'-separated child ("k=v/part-0.parquet"): fs path and uri.
ResolvedPath ChildPath(const ResolvedPath& base, std::string_view relative);

}  // namespace openglue::storage
