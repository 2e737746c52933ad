#include "storage/object_store.h"

#include <cctype>

#include "common/strings.h"

namespace openglue::storage {

namespace {

bool LooksLikeIpv4(std::string_view name) {
  int dots = 0;
  for (char c : name) {
    if (c == '.') ++dots;
    else if (!std::isdigit(static_cast<unsigned char>(c))) return false;
  }
  return dots == 3;
}

}  // namespace

std::string DisplayUri(std::string_view bucket, std::string_view key) {
  return TruncateUtf8("s3://" + std::string(bucket) + "/" + std::string(key), 1200);
}

Status ValidateBucketName(std::string_view bucket) {
  auto refuse = [&](const char* why) {
    return Status::InvalidInput("Invalid bucket name \"" + TruncateUtf8(bucket, 100) +
                                "\": " + why);
  };
  if (bucket.size() < 3 || bucket.size() > 63) return refuse("it must be 3 to 63 characters long");
  for (char c : bucket) {
    bool ok = (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '.' || c == '-';
    if (!ok) return refuse("only lowercase letters, digits, '.' and '-' are allowed");
  }
  auto alnum = [](char c) { return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9'); };
  if (!alnum(bucket.front()) || !alnum(bucket.back()))
    return refuse("it must start and end with a letter or digit");
  if (bucket.find("..") != std::string_view::npos) return refuse("it must not contain \"..\"");
  if (LooksLikeIpv4(bucket)) return refuse("it must not be an IP address");
  if (StartsWith(bucket, "xn--")) return refuse("it must not start with \"xn--\"");
  return Status::OK();
}

Status ValidateKey(std::string_view key) {
  if (key.empty()) return Status::InvalidInput("An object key must not be empty");
  if (key.size() > kMaxKeyBytes)
    return Status::InvalidInput("Object key \"" + TruncateUtf8(key, 100) + "...\" is longer than " +
                                std::to_string(kMaxKeyBytes) + " bytes");
  if (!IsValidUtf8(key))
    return Status::InvalidInput("Object key \"" + SanitizeUtf8(key) + "\" is not valid UTF-8");
  if (key.find('\0') != std::string_view::npos)
    return Status::InvalidInput("Object key \"" + SanitizeUtf8(key) + "\" holds a NUL character");
  return Status::OK();
}

}  // namespace openglue::storage
