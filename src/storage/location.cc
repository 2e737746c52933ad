#include "storage/location.h"

#include "common/strings.h"
#include "storage/object_store.h"

namespace openglue::storage {

Result<Location> ParseLocation(std::string_view uri) {
  std::string shown = TruncateUtf8(uri, 1200);
  if (uri.empty()) return Status::InvalidInput("An empty path is not a location");
  if (!IsValidUtf8(uri)) return Status::InvalidInput("Path " + shown + " is not valid UTF-8");
  if (uri.find('\0') != std::string_view::npos)
    return Status::InvalidInput("Path " + shown + " holds a NUL character");
  Location location;
  location.uri = std::string(uri);
  size_t scheme_end = uri.find("://");
  if (scheme_end == std::string_view::npos) {
    location.scheme = LocationScheme::kLocalFile;
    location.path = std::string(uri);
    return location;
  }
  std::string scheme = ToLower(uri.substr(0, scheme_end));
  std::string_view rest = uri.substr(scheme_end + 3);
  if (scheme == "file") {
    // file:///abs or file://localhost/abs; a remote host is not this machine.
    size_t slash = rest.find('/');
    std::string_view host = slash == std::string_view::npos ? rest : rest.substr(0, slash);
    if (!host.empty() && host != "localhost")
      return Status::InvalidInput("Path " + shown +
                                  " names a remote host; file:// paths are local");
    if (slash == std::string_view::npos)
      return Status::InvalidInput("Path " + shown + " names no file");
    location.scheme = LocationScheme::kLocalFile;
    location.path = std::string(rest.substr(slash));
    return location;
  }
  if (scheme != "s3" && scheme != "s3a" && scheme != "s3n")
    return Status::InvalidInput("Path " + shown + " has an unsupported scheme \"" + scheme +
                                "\" (s3://, s3a://, s3n://, file:// or a local path)");
  size_t slash = rest.find('/');
  location.scheme = LocationScheme::kObject;
  location.bucket = std::string(slash == std::string_view::npos ? rest : rest.substr(0, slash));
  location.key = slash == std::string_view::npos ? "" : std::string(rest.substr(slash + 1));
  Status bucket_ok = ValidateBucketName(location.bucket);
  if (!bucket_ok.ok()) return Status::InvalidInput("Path " + shown + ": " + bucket_ok.message());
  if (location.key.size() > kMaxKeyBytes)
    return Status::InvalidInput("Path " + shown + ": the key is longer than " +
                                std::to_string(kMaxKeyBytes) + " bytes");
  return location;
}

}  // namespace openglue::storage
