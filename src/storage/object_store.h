// ObjectStore: S3-shaped object access (buckets of keys holding bytes), the one interface the
// server, the engine, crawlers and bookmarks use for `s3://bucket/key` data.
//
// Implementations: LocalObjectStore (the embedded store, `<data_dir>/s3/<bucket>/<key>`), and
// later an S3 endpoint. Every implementation passes the conformance suite in
// storage/object_store_conformance.h, so callers may rely on exactly what this header says.
//
// Keys are UTF-8 strings of at most 1,024 bytes, compared as bytes (S3's order). Listing is
// flat: there are no directories, only keys that share a prefix, rolled up into common prefixes
// by a delimiter. A key is never a path: `..`, `.` and empty segments are characters of a key.
// An implementation that stores keys as files (LocalObjectStore) refuses the keys it cannot
// hold without leaving its root, with InvalidInput naming them; it never resolves them.
//
// Errors (each message names the `s3://bucket/key` concerned):
//   InvalidInput    a bucket name or key that is not valid, or that the store cannot hold
//                   confined (see LocalObjectStore), a bad range or page size, a bad token.
//   EntityNotFound  the bucket or object does not exist.
//   Internal        an I/O or backend failure.
//
// Thread-safety: every method may be called concurrently. A Write is atomic: a concurrent
// reader sees the whole old object or the whole new one, never a mix or a partial file.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "common/status.h"

namespace openglue::storage {

// S3 caps a page at 1,000 entries (keys plus common prefixes).
inline constexpr int kMaxListKeys = 1000;
inline constexpr size_t kMaxKeyBytes = 1024;

struct ObjectInfo {
  std::string key;
  int64_t size = 0;              // bytes
  int64_t last_modified_ms = 0;  // milliseconds since the Unix epoch
};

struct ListRequest {
  std::string bucket;
  std::string prefix;        // only keys starting with this ("" = all)
  std::string delimiter;     // "" = flat; else keys with it after the prefix roll up
  std::string continuation;  // ListResult::next_continuation of the previous page, or ""
  int max_keys = kMaxListKeys;  // 1..1000 entries per page (objects + common prefixes);
                                // larger values are lowered to 1000
};

struct ListResult {
  std::vector<ObjectInfo> objects;          // in key order
  std::vector<std::string> common_prefixes;  // in order; each ends with the delimiter
  std::string next_continuation;            // "" when this is the last page
};

class ObjectStore {
 public:
  virtual ~ObjectStore() = default;

  // Creates the bucket; OK if it exists already. InvalidInput for a name S3 refuses.
  virtual Status CreateBucket(std::string_view bucket) = 0;

  // One page of the keys of `request.bucket`, in key order. EntityNotFound if the bucket does
  // not exist. A common prefix appears once, in order among the keys, on the first page where it
  // falls; a continuation token resumes after the last entry of its page.
  virtual Result<ListResult> List(const ListRequest& request) = 0;

  // Size and last-modified time of one object. EntityNotFound if there is none.
  virtual Result<ObjectInfo> Stat(std::string_view bucket, std::string_view key) = 0;

  // Up to `length` bytes from `offset` (length < 0: to the end). Fewer bytes are returned when
  // the object ends first; offset == size returns "". InvalidInput when offset < 0 or
  // offset > size. EntityNotFound if there is no such object.
  virtual Result<std::string> Read(std::string_view bucket, std::string_view key, int64_t offset,
                                   int64_t length) = 0;

  // Creates or replaces the object, atomically and durably: when Write returns OK the data is
  // on stable storage and every reader sees it; on failure the old object (if any) is intact.
  // EntityNotFound if the bucket does not exist.
  virtual Status Write(std::string_view bucket, std::string_view key, std::string_view data) = 0;

  // Removes the object. OK when there was none (as S3's DeleteObject); EntityNotFound if the
  // bucket does not exist.
  virtual Status Delete(std::string_view bucket, std::string_view key) = 0;

  // The whole object (Read from 0 to the end).
  Result<std::string> ReadAll(std::string_view bucket, std::string_view key) {
    return Read(bucket, key, 0, -1);
  }
};

// OK if `bucket` follows S3's bucket naming rules (3-63 characters of lowercase letters, digits,
// dots and hyphens, starting and ending with a letter or digit, no "..", not an IP address),
// else InvalidInput naming it.
Status ValidateBucketName(std::string_view bucket);
// OK if `key` is a valid S3 key (1..1024 bytes of UTF-8 without NUL), else InvalidInput naming
// it. Says nothing of `..` segments: those are valid S3 keys.
Status ValidateKey(std::string_view key);
// "s3://bucket/key" for messages (invalid UTF-8 replaced, cut to a readable length).
std::string DisplayUri(std::string_view bucket, std::string_view key);

}  // namespace openglue::storage
