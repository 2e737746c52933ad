#include "storage/arrow_fs.h"

#include <limits.h>
#include <stdlib.h>
#include <sys/stat.h>

#include <cstdlib>
#include <exception>
#include <filesystem>
#include <mutex>
#include <vector>

#include <arrow/filesystem/localfs.h>
#include <arrow/filesystem/filesystem.h>
#include <arrow/filesystem/s3fs.h>

#include "common/strings.h"
#include "storage/location.h"

namespace openglue::storage {
namespace {

std::vector<std::string> SplitKey(std::string_view key) {
  std::vector<std::string> out;
  size_t start = 0;
  while (true) {
    size_t slash = key.find('/', start);
    if (slash == std::string_view::npos) {
      out.emplace_back(key.substr(start));
      return out;
    }
    out.emplace_back(key.substr(start, slash - start));
    start = slash + 1;
  }
}

Result<std::string> RealPath(const std::string& path) {
  char buffer[PATH_MAX];
  if (realpath(path.c_str(), buffer) == nullptr) return Status::EntityNotFound(path);
  return std::string(buffer);
}

bool IsUnder(const std::string& path, const std::string& root) {
  if (root == "/") return true;
  return path == root || (path.size() > root.size() && path.compare(0, root.size(), root) == 0 &&
                          path[root.size()] == '/');
}

// S3 is initialised once per process; FinalizeArrowS3 ends it (see the header).
std::mutex s3_mutex;

Status EnsureS3() {
  std::lock_guard<std::mutex> lock(s3_mutex);
  if (arrow::fs::IsS3Finalized())
    return Status::Internal("S3 support was already shut down in this process");
  arrow::Status status = arrow::fs::EnsureS3Initialized();
  if (!status.ok()) return Status::Internal("cannot initialise S3 support: " + status.ToString());
  return Status::OK();
}

Result<ResolvedPath> ResolveEmbedded(const Location& location, const StorageOptions& options) {
  const std::string shown = TruncateUtf8(location.uri, 1200);
  std::string key = location.key;
  if (!key.empty() && key.back() == '/') key.pop_back();
  if (!key.empty()) {
    for (const std::string& segment : SplitKey(key)) {
      std::string why;
      if (segment.empty()) why = "an empty path segment (a leading or doubled '/')";
      else if (segment == "." || segment == "..") why = "a \"" + segment + "\" segment";
      if (!why.empty())
        return Status::InvalidInput(shown + ": the embedded object store refuses keys with " +
                                    why + ", which would not stay inside the store");
    }
  }
  auto root = RealPath(options.s3_root);
  if (!root.ok())
    return Status::InvalidInput(shown + ": the embedded object store folder " + options.s3_root +
                                " does not exist");
  const std::string rel = location.bucket + (key.empty() ? "" : "/" + key);
  // The nearest existing ancestor of the target (the target itself when it exists) must
  // resolve, links followed, to a place under the root.
  std::filesystem::path probe = std::filesystem::path(*root) / rel;
  while (true) {
    struct stat st;
    if (lstat(probe.c_str(), &st) == 0) break;
    if (!probe.has_parent_path() || probe.parent_path() == probe) break;
    probe = probe.parent_path();
  }
  auto real = RealPath(probe.string());
  if (!real.ok() || !IsUnder(*real, *root))
    return Status::InvalidInput(shown + ": a symbolic link inside the embedded object store "
                                "leads outside it; refused");
  ResolvedPath out;
  out.fs = std::make_shared<arrow::fs::SubTreeFileSystem>(
      *root, std::make_shared<arrow::fs::LocalFileSystem>());
  out.path = rel;
  out.uri = "s3://" + rel;
  return out;
}

Result<ResolvedPath> ResolveEndpoint(const Location& location, const StorageOptions& options) {
  const std::string shown = TruncateUtf8(location.uri, 1200);
  std::string_view endpoint = options.endpoint;
  arrow::fs::S3Options s3;
  size_t sep = endpoint.find("://");
  std::string scheme = sep == std::string_view::npos ? "https" : ToLower(endpoint.substr(0, sep));
  std::string_view host = sep == std::string_view::npos ? endpoint : endpoint.substr(sep + 3);
  while (!host.empty() && host.back() == '/') host.remove_suffix(1);
  if ((scheme != "http" && scheme != "https") || host.empty() ||
      host.find('/') != std::string_view::npos)
    return Status::InvalidInput(shown + ": the S3 endpoint " +
                                TruncateUtf8(options.endpoint, 200) +
                                " is not an http(s)://host[:port] URL");
  OG_RETURN_NOT_OK(EnsureS3());
  s3.endpoint_override = std::string(host);
  s3.scheme = scheme;
  s3.region = options.region.empty() ? "us-east-1" : options.region;
  s3.force_virtual_addressing = false;
  if (!options.access_key.empty())
    s3.ConfigureAccessKey(options.access_key, options.secret_key, options.session_token);
  try {
    auto fs = arrow::fs::S3FileSystem::Make(s3);
    if (!fs.ok())
      return Status::Internal(shown + ": cannot connect to S3 at " + options.endpoint + ": " +
                              fs.status().ToString());
    std::string key = location.key;
    while (!key.empty() && key.back() == '/') key.pop_back();
    ResolvedPath out;
    out.fs = *fs;
    out.path = location.bucket + (key.empty() ? "" : "/" + key);
    out.uri = "s3://" + out.path;
    out.is_object_store = true;
    return out;
  } catch (const std::exception& e) {
    return Status::Internal(shown + ": cannot connect to S3: " + e.what());
  }
}

}  // namespace

void FinalizeArrowS3() {
  std::lock_guard<std::mutex> lock(s3_mutex);
  if (arrow::fs::IsS3Initialized()) (void)arrow::fs::EnsureS3Finalized();
}

StorageOptions StorageOptions::FromMap(const std::map<std::string, std::string>& map) {
  StorageOptions o;
  auto get = [&](const char* name, std::string* field) {
    auto it = map.find(name);
    if (it != map.end()) *field = it->second;
  };
  get("s3_root", &o.s3_root);
  get("endpoint", &o.endpoint);
  get("access_key", &o.access_key);
  get("secret_key", &o.secret_key);
  get("session_token", &o.session_token);
  get("region", &o.region);
  return o;
}

StorageOptions FromMap(const std::map<std::string, std::string>& map) {
  return StorageOptions::FromMap(map);
}

Result<ResolvedPath> ResolveArrowPath(std::string_view uri, const StorageOptions& options) {
  OG_ASSIGN_OR_RETURN(Location location, ParseLocation(uri));
  if (location.scheme == LocationScheme::kObject) {
    if (!options.s3_root.empty()) return ResolveEmbedded(location, options);
    if (!options.endpoint.empty()) return ResolveEndpoint(location, options);
    return Status::InvalidInput(TruncateUtf8(uri, 1200) +
                                ": no object storage is configured for s3:// paths (storage "
                                "options need s3_root or endpoint)");
  }
  std::error_code ec;
  std::filesystem::path absolute = std::filesystem::absolute(location.path, ec);
  if (ec) return Status::InvalidInput(TruncateUtf8(uri, 1200) + ": " + ec.message());
  std::string path = absolute.lexically_normal().string();
  while (path.size() > 1 && path.back() == '/') path.pop_back();
  ResolvedPath out;
  out.fs = std::make_shared<arrow::fs::LocalFileSystem>();
  out.path = path;
  out.uri = location.uri.find("://") != std::string::npos ? "file://" + path : path;
  return out;
}

ResolvedPath ChildPath(const ResolvedPath& base, std::string_view relative) {
  ResolvedPath out = base;
  std::string rel(relative);
  out.path = base.path.empty() ? rel : base.path + "/" + rel;
  out.uri = base.uri.empty() ? rel : (base.uri.back() == '/' ? base.uri + rel : base.uri + "/" + rel);
  return out;
}

}  // namespace openglue::storage
