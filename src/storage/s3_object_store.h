// S3ObjectStore: an ObjectStore on any S3-compatible endpoint (AWS S3, versitygw, Ceph RGW,
// MinIO), through Arrow's S3 filesystem (arrow/filesystem/s3fs.h from the pinned pyarrow).
//
// Differences from S3 itself, so that it behaves as LocalObjectStore does (the conformance suite
// runs on both):
// - Keys that are path syntax (an empty segment, a "." or ".." segment: "a//b", "/x", "a/..")
//   are refused with InvalidInput naming them, as LocalObjectStore refuses them: Arrow's S3
//   filesystem addresses objects by path and cannot name them, and an S3 server over a POSIX
//   directory (versitygw) refuses them too.
// - Listing reads the keys under the prefix's folder and pages them itself (Arrow lists no
//   delimiter or continuation): a page costs a listing of that folder, fine for the job-sized
//   folders it serves, slow for a bucket of millions of keys.
// - Zero-byte keys ending in '/' are folder markers (Arrow writes them so an emptied folder
//   survives a delete) and are never listed.
//
// Thread-safety: every method may be called concurrently (Arrow's S3 filesystem is).
#pragma once

#include <memory>
#include <string>

#include "storage/object_store.h"

namespace openglue::storage {

struct S3ObjectStoreOptions {
  std::string endpoint;  // "http://127.0.0.1:4691", "https://s3.eu-west-1.amazonaws.com"; "" = AWS
  std::string access_key;
  std::string secret_key;
  std::string session_token;  // optional
  std::string region = "us-east-1";
  double request_timeout_seconds = 30;
};

class S3ObjectStore : public ObjectStore {
 public:
  // Initializes Arrow's S3 support once per process. InvalidInput for an endpoint that is not
  // http(s)://host[:port]. Connects lazily: an unreachable endpoint fails the first call.
  static Result<std::unique_ptr<S3ObjectStore>> Make(S3ObjectStoreOptions options);
  ~S3ObjectStore() override;

  Status CreateBucket(std::string_view bucket) override;
  Result<ListResult> List(const ListRequest& request) override;
  Result<ObjectInfo> Stat(std::string_view bucket, std::string_view key) override;
  Result<std::string> Read(std::string_view bucket, std::string_view key, int64_t offset,
                           int64_t length) override;
  Status Write(std::string_view bucket, std::string_view key, std::string_view data) override;
  Status Delete(std::string_view bucket, std::string_view key) override;

  // Shuts Arrow's S3 support down (the AWS SDK must be finalized before the process exits).
  // Call once, when no S3ObjectStore is used any more.
  static void Finalize();

 private:
  struct Impl;
  explicit S3ObjectStore(std::unique_ptr<Impl> impl);
  Status BucketExists(std::string_view bucket);
  std::unique_ptr<Impl> impl_;
};

}  // namespace openglue::storage
