// Local-only resolver: the embedded store and local paths. (The S3-endpoint backend is
// provided by the storage helper's version of this file.)
#include "storage/arrow_fs.h"

#include <arrow/filesystem/localfs.h>

#include "storage/location.h"

namespace openglue::storage {

StorageOptions FromMap(const std::map<std::string, std::string>& options) {
  StorageOptions out;
  auto get = [&](const char* key, std::string* field) {
    auto it = options.find(key);
    if (it != options.end()) *field = it->second;
  };
  get("s3_root", &out.s3_root);
  get("endpoint", &out.endpoint);
  get("access_key", &out.access_key);
  get("secret_key", &out.secret_key);
  get("session_token", &out.session_token);
  get("region", &out.region);
  return out;
}

namespace {

// Every segment of an object key must be a plain name: the key maps one-to-one onto a path
// below the bucket's folder.
bool KeyIsConfined(std::string_view key) {
  if (!key.empty() && key.front() == '/') return false;
  size_t start = 0;
  while (start <= key.size()) {
    size_t end = key.find('/', start);
    if (end == std::string_view::npos) end = key.size();
    std::string_view segment = key.substr(start, end - start);
    // A trailing '/' (a prefix) leaves one empty last segment, which is fine.
    if (segment == "." || segment == "..") return false;
    if (segment.empty() && end != key.size()) return false;
    start = end + 1;
  }
  return true;
}

}  // namespace

Result<ResolvedPath> ResolveArrowPath(std::string_view uri, const StorageOptions& options) {
  OG_ASSIGN_OR_RETURN(Location location, ParseLocation(uri));
  ResolvedPath out;
  out.uri = std::string(uri);
  out.fs = std::make_shared<arrow::fs::LocalFileSystem>();
  if (location.scheme == LocationScheme::kLocalFile) {
    out.path = location.path;
    return out;
  }
  if (options.s3_root.empty()) {
    return Status::InvalidInput("cannot read '" + out.uri +
                                "': no object store is configured (s3_root/endpoint)");
  }
  if (!KeyIsConfined(location.key)) {
    return Status::InvalidInput("'" + out.uri + "': the key has '.', '..' or empty segments");
  }
  std::string root = options.s3_root;
  while (root.size() > 1 && root.back() == '/') root.pop_back();
  out.path = root + "/" + location.bucket;
  if (!location.key.empty()) out.path += "/" + location.key;
  while (out.path.size() > 1 && out.path.back() == '/') out.path.pop_back();
  return out;
}

}  // namespace openglue::storage
