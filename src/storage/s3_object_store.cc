#include "storage/s3_object_store.h"

#include <algorithm>
#include <chrono>
#include <mutex>
#include <optional>
#include <thread>
#include <vector>

#include <arrow/buffer.h>
#include <arrow/filesystem/s3fs.h>
#include <arrow/io/interfaces.h>
#include <arrow/util/key_value_metadata.h>
#include <openssl/evp.h>

#include "common/strings.h"
#include "storage/local_object_store.h"

namespace openglue::storage {

namespace afs = arrow::fs;

struct S3ObjectStore::Impl {
  std::shared_ptr<afs::S3FileSystem> fs;
};

namespace {

// An Arrow failure as Internal, naming what was being done (Arrow's messages are ASCII, but an
// S3 server's text may be anything: sanitized).
Status FromArrow(const arrow::Status& st, const std::string& what) {
  return Status::Internal(what + ": " + SanitizeUtf8(TruncateUtf8(st.ToString(), 1000)));
}

std::string PathOf(std::string_view bucket, std::string_view key) {
  return std::string(bucket) + "/" + std::string(key);
}

int64_t MillisOf(const afs::FileInfo& info) {
  return std::chrono::duration_cast<std::chrono::milliseconds>(info.mtime().time_since_epoch())
      .count();
}

constexpr char kHex[] = "0123456789abcdef";

std::string HexOf(const unsigned char* bytes, size_t n) {
  std::string out;
  for (size_t i = 0; i < n; ++i) {
    out += kHex[bytes[i] >> 4];
    out += kHex[bytes[i] & 15];
  }
  return out;
}

// What an opened S3 file's HEAD said about the object's version.
struct Version {
  int64_t size = 0;
  std::string etag, modified;
  bool operator==(const Version& o) const {
    return size == o.size && etag == o.etag && modified == o.modified;
  }
};

std::optional<Version> VersionOf(arrow::io::RandomAccessFile* file) {
  auto size = file->GetSize();
  auto metadata = file->ReadMetadata();
  if (!size.ok() || !metadata.ok() || !*metadata) return std::nullopt;
  return Version{*size, (*metadata)->Get("ETag").ValueOr(""),
                 (*metadata)->Get("Last-Modified").ValueOr("")};
}

// S3's ETag of an object written in one PutObject is the hex MD5 of its bytes; of a multipart
// upload, the MD5 of the parts' binary MD5s with a "-<parts>" suffix (Arrow writes objects
// smaller than its part size as one part: "-1"). Says whether `data` has that ETag; nullopt
// when the ETag cannot be checked (several parts, or another server's scheme).
std::optional<bool> MatchesEtag(const arrow::Buffer& data, std::string etag) {
  etag.erase(std::remove(etag.begin(), etag.end(), '"'), etag.end());
  etag = ToLower(etag);
  const bool one_part = etag.size() == 34 && etag.compare(32, 2, "-1") == 0;
  if (etag.size() != 32 && !one_part) return std::nullopt;
  unsigned char md5[EVP_MAX_MD_SIZE];
  unsigned int n = 0;
  if (EVP_Digest(data.data(), static_cast<size_t>(data.size()), md5, &n, EVP_md5(), nullptr) != 1)
    return std::nullopt;
  if (one_part && EVP_Digest(md5, n, md5, &n, EVP_md5(), nullptr) != 1) return std::nullopt;
  return HexOf(md5, n) == etag.substr(0, 32);
}

std::string EncodeToken(bool is_prefix, const std::string& last) {
  const std::string raw = std::string(is_prefix ? "p" : "k") + last;
  return HexOf(reinterpret_cast<const unsigned char*>(raw.data()), raw.size());
}

Status DecodeToken(const std::string& token, std::string* last) {
  auto nibble = [](char c) -> int {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    return -1;
  };
  std::string raw;
  bool ok = token.size() % 2 == 0 && !token.empty();
  for (size_t i = 0; ok && i < token.size(); i += 2) {
    int hi = nibble(token[i]), lo = nibble(token[i + 1]);
    if (hi < 0 || lo < 0) ok = false;
    else raw += static_cast<char>(hi * 16 + lo);
  }
  if (!ok || raw.empty() || (raw[0] != 'p' && raw[0] != 'k'))
    return Status::InvalidInput("The continuation token is not valid");
  *last = raw.substr(1);
  return Status::OK();
}

Status ValidateObject(std::string_view bucket, std::string_view key) {
  OG_RETURN_NOT_OK(ValidateBucketName(bucket));
  OG_RETURN_NOT_OK(ValidateKey(key));
  // Path syntax in a key: Arrow's S3 filesystem cannot address it (see the header).
  return LocalObjectStore::ValidateLocalKey(bucket, key);
}

std::once_flag g_init_once;
arrow::Status g_init_status;

}  // namespace

S3ObjectStore::S3ObjectStore(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
S3ObjectStore::~S3ObjectStore() = default;

Result<std::unique_ptr<S3ObjectStore>> S3ObjectStore::Make(S3ObjectStoreOptions options) {
  afs::S3Options s3 = afs::S3Options::FromAccessKey(options.access_key, options.secret_key,
                                                    options.session_token);
  if (options.access_key.empty() || options.secret_key.empty())
    s3 = afs::S3Options::Anonymous();
  s3.region = options.region.empty() ? "us-east-1" : options.region;
  if (!options.endpoint.empty()) {
    std::string endpoint = options.endpoint;
    if (StartsWith(endpoint, "http://")) {
      s3.scheme = "http";
      endpoint = endpoint.substr(7);
    } else if (StartsWith(endpoint, "https://")) {
      s3.scheme = "https";
      endpoint = endpoint.substr(8);
    } else {
      return Status::InvalidInput("S3 endpoint '" + options.endpoint +
                                  "' must start with http:// or https://");
    }
    while (!endpoint.empty() && endpoint.back() == '/') endpoint.pop_back();
    if (endpoint.empty() || endpoint.find('/') != std::string::npos)
      return Status::InvalidInput("S3 endpoint '" + options.endpoint + "' must be scheme://host[:port]");
    s3.endpoint_override = endpoint;
  }
  s3.allow_bucket_creation = true;
  s3.request_timeout = options.request_timeout_seconds;
  s3.connect_timeout = std::min(10.0, options.request_timeout_seconds);
  std::call_once(g_init_once, [] {
    afs::S3GlobalOptions global = afs::S3GlobalOptions::Defaults();
    global.log_level = afs::S3LogLevel::Fatal;
    g_init_status = afs::InitializeS3(global);
  });
  if (!g_init_status.ok()) return FromArrow(g_init_status, "Initializing S3");
  auto fs = afs::S3FileSystem::Make(s3);
  if (!fs.ok()) return FromArrow(fs.status(), "Connecting to S3 at " + options.endpoint);
  auto impl = std::make_unique<Impl>();
  impl->fs = *fs;
  return std::unique_ptr<S3ObjectStore>(new S3ObjectStore(std::move(impl)));
}

void S3ObjectStore::Finalize() {
  if (afs::IsS3Initialized()) (void)afs::FinalizeS3();
}

Status S3ObjectStore::BucketExists(std::string_view bucket) {
  OG_RETURN_NOT_OK(ValidateBucketName(bucket));
  auto info = impl_->fs->GetFileInfo(std::string(bucket));
  if (!info.ok()) return FromArrow(info.status(), "Looking up bucket " + std::string(bucket));
  if (info->type() != afs::FileType::Directory)
    return Status::EntityNotFound("The bucket " + std::string(bucket) + " does not exist");
  return Status::OK();
}

Status S3ObjectStore::CreateBucket(std::string_view bucket) {
  OG_RETURN_NOT_OK(ValidateBucketName(bucket));
  if (BucketExists(bucket).ok()) return Status::OK();
  arrow::Status st = impl_->fs->CreateDir(std::string(bucket), /*recursive=*/false);
  if (!st.ok() && !BucketExists(bucket).ok())
    return FromArrow(st, "Creating bucket " + std::string(bucket));
  return Status::OK();
}

Result<ListResult> S3ObjectStore::List(const ListRequest& request) {
  if (request.max_keys < 1) return Status::InvalidInput("max_keys must be at least 1");
  size_t max_keys = static_cast<size_t>(std::min(request.max_keys, kMaxListKeys));
  std::string after;
  bool resume = !request.continuation.empty();
  if (resume) OG_RETURN_NOT_OK(DecodeToken(request.continuation, &after));
  OG_RETURN_NOT_OK(BucketExists(request.bucket));
  // Arrow lists folders: list the one holding the prefix, recursively, and filter.
  afs::FileSelector selector;
  size_t slash = request.prefix.rfind('/');
  selector.base_dir = request.bucket;
  if (slash != std::string::npos && slash > 0) selector.base_dir += "/" + request.prefix.substr(0, slash);
  selector.recursive = true;
  selector.allow_not_found = true;
  auto infos = impl_->fs->GetFileInfo(selector);
  if (!infos.ok()) return FromArrow(infos.status(), "Listing " + DisplayUri(request.bucket, request.prefix));
  // Entries in key order: objects, and common prefixes standing for the keys they roll up.
  struct Entry {
    std::string name;
    bool is_prefix;
    ObjectInfo info;
  };
  std::vector<Entry> entries;
  std::string bucket_path = request.bucket + "/";
  for (const afs::FileInfo& info : *infos) {
    if (info.type() != afs::FileType::File) continue;
    const std::string& path = info.path();
    if (!StartsWith(path, bucket_path)) continue;
    std::string key = path.substr(bucket_path.size());
    if (key.empty() || !StartsWith(key, request.prefix)) continue;
    if (key.back() == '/' && info.size() == 0) continue;  // a folder marker
    if (!request.delimiter.empty()) {
      size_t at = key.find(request.delimiter, request.prefix.size());
      if (at != std::string::npos) {
        entries.push_back({key.substr(0, at + request.delimiter.size()), true, {}});
        continue;
      }
    }
    entries.push_back({key, false, ObjectInfo{key, info.size(), MillisOf(info)}});
  }
  std::sort(entries.begin(), entries.end(),
            [](const Entry& a, const Entry& b) { return a.name < b.name; });
  entries.erase(std::unique(entries.begin(), entries.end(),
                            [](const Entry& a, const Entry& b) { return a.name == b.name; }),
                entries.end());
  ListResult result;
  size_t taken = 0;
  bool last_is_prefix = false;
  for (const Entry& entry : entries) {
    if (resume && entry.name <= after) continue;
    if (taken == max_keys) {  // more remain: resume after this page's last entry
      result.next_continuation = EncodeToken(last_is_prefix, after);
      break;
    }
    if (entry.is_prefix) result.common_prefixes.push_back(entry.name);
    else result.objects.push_back(entry.info);
    after = entry.name;
    last_is_prefix = entry.is_prefix;
    resume = true;
    ++taken;
  }
  return result;
}

Result<ObjectInfo> S3ObjectStore::Stat(std::string_view bucket, std::string_view key) {
  OG_RETURN_NOT_OK(ValidateObject(bucket, key));
  auto info = impl_->fs->GetFileInfo(PathOf(bucket, key));
  if (!info.ok()) return FromArrow(info.status(), "Looking up " + DisplayUri(bucket, key));
  if (info->type() != afs::FileType::File) {
    OG_RETURN_NOT_OK(BucketExists(bucket));
    return Status::EntityNotFound("The object " + DisplayUri(bucket, key) + " does not exist");
  }
  return ObjectInfo{std::string(key), info->size(), MillisOf(*info)};
}

Result<std::string> S3ObjectStore::Read(std::string_view bucket, std::string_view key,
                                        int64_t offset, int64_t length) {
  if (offset < 0) return Status::InvalidInput("A read offset must not be negative");
  OG_RETURN_NOT_OK(ValidateObject(bucket, key));
  const std::string path = PathOf(bucket, key);
  // Arrow reads a range computed from a HEAD request (made when the file is opened); the object
  // can be overwritten between the HEAD and the GET, and Arrow does not see a GET that returned
  // fewer bytes than asked. A whole-object read is checked against the HEAD's ETag (the MD5 of
  // the bytes for an object written in one piece): the bytes are that version's, whole. Any
  // other read is accepted when a second HEAD shows the same size, time and ETag. Reads that
  // lose the race are repeated.
  for (int attempt = 0; attempt < 10; ++attempt) {
    if (attempt > 0) std::this_thread::sleep_for(std::chrono::milliseconds(attempt * 5));
    auto info = impl_->fs->GetFileInfo(path);
    if (!info.ok()) return FromArrow(info.status(), "Looking up " + DisplayUri(bucket, key));
    if (info->type() != afs::FileType::File) {
      OG_RETURN_NOT_OK(BucketExists(bucket));
      return Status::EntityNotFound("The object " + DisplayUri(bucket, key) + " does not exist");
    }
    auto file = impl_->fs->OpenInputFile(path);
    if (!file.ok()) continue;  // gone since the lookup: the next lookup says so
    std::optional<Version> version = VersionOf(file->get());
    if (!version) continue;
    if (offset > version->size)
      return Status::InvalidInput("The range starting at " + std::to_string(offset) +
                                  " is past the end of " + DisplayUri(bucket, key) + " (" +
                                  std::to_string(version->size) + " bytes)");
    int64_t want = version->size - offset;
    if (length >= 0) want = std::min(want, length);
    if (want == 0) return std::string();
    auto buffer = (*file)->ReadAt(offset, want);
    if (buffer.ok() && (*buffer)->size() == want && offset == 0 && want == version->size) {
      std::optional<bool> matches = MatchesEtag(**buffer, version->etag);
      if (matches == true) return (*buffer)->ToString();
      if (matches == false) continue;  // another version's bytes
    }
    auto after = impl_->fs->OpenInputFile(path);
    const bool same = after.ok() && VersionOf(after->get()) == version;
    if (buffer.ok() && (*buffer)->size() == want && same) return (*buffer)->ToString();
    if (!buffer.ok() && same) return FromArrow(buffer.status(), "Reading " + DisplayUri(bucket, key));
  }
  return Status::Internal("Reading " + DisplayUri(bucket, key) +
                          ": the object kept changing while it was read");
}

Status S3ObjectStore::Write(std::string_view bucket, std::string_view key, std::string_view data) {
  OG_RETURN_NOT_OK(ValidateObject(bucket, key));
  OG_RETURN_NOT_OK(BucketExists(bucket));
  // One PutObject (or a multipart upload for large data): S3 makes it visible whole or not at all.
  auto out = impl_->fs->OpenOutputStream(PathOf(bucket, key));
  if (!out.ok()) return FromArrow(out.status(), "Writing " + DisplayUri(bucket, key));
  arrow::Status st = (*out)->Write(data.data(), static_cast<int64_t>(data.size()));
  if (st.ok()) st = (*out)->Close();
  else (void)(*out)->Abort();
  if (!st.ok()) return FromArrow(st, "Writing " + DisplayUri(bucket, key));
  return Status::OK();
}

Status S3ObjectStore::Delete(std::string_view bucket, std::string_view key) {
  OG_RETURN_NOT_OK(ValidateObject(bucket, key));
  OG_RETURN_NOT_OK(BucketExists(bucket));
  auto info = impl_->fs->GetFileInfo(PathOf(bucket, key));
  if (!info.ok()) return FromArrow(info.status(), "Looking up " + DisplayUri(bucket, key));
  if (info->type() != afs::FileType::File) return Status::OK();  // S3: deleting nothing is OK
  arrow::Status st = impl_->fs->DeleteFile(PathOf(bucket, key));
  if (!st.ok() && impl_->fs->GetFileInfo(PathOf(bucket, key)).ValueOr(afs::FileInfo()).IsFile())
    return FromArrow(st, "Deleting " + DisplayUri(bucket, key));
  return Status::OK();
}

}  // namespace openglue::storage
