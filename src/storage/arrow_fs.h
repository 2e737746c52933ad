// Arrow filesystems for the paths a job gives: s3://bucket/key on the embedded store or on an
// S3-compatible endpoint, file:// URIs and plain local paths.
//
// The engine reads and writes every object through the Arrow filesystem this resolves to, so
// the embedded store's confinement (no `..`, no absolute keys, no symlink leaving the root) is
// decided here once.
#pragma once

#include <map>
#include <memory>
#include <string>
#include <string_view>

#include <arrow/filesystem/filesystem.h>

#include "common/status.h"

namespace openglue::storage {

// Where s3:// goes: the embedded store's directory (`s3_root`, `s3://b/k` -> `<s3_root>/b/k`)
// or, when s3_root is empty and endpoint is set, an S3-compatible endpoint.
struct StorageOptions {
  std::string s3_root;
  std::string endpoint;
  std::string access_key;
  std::string secret_key;
  std::string session_token;
  std::string region;
};

// The options from the Python layer's dict (keys s3_root, endpoint, access_key, secret_key,
// session_token, region; others ignored).
StorageOptions FromMap(const std::map<std::string, std::string>& options);

struct ResolvedPath {
  std::shared_ptr<arrow::fs::FileSystem> fs;
  std::string path;  // the path inside `fs`
  std::string uri;   // the uri as the user wrote it (for messages)
};

// Resolves `uri` (s3://, s3a://, s3n://, file://, or a plain path) to a filesystem and a path
// in it. InvalidInput naming the uri when it cannot be parsed, when an s3 key would leave the
// embedded store (`..`/`.`/empty segments, an absolute key) or when s3:// is used with neither
// s3_root nor endpoint configured. Thread-safe.
Result<ResolvedPath> ResolveArrowPath(std::string_view uri, const StorageOptions& options);

}  // namespace openglue::storage
