// LocalObjectStore: the embedded object store, one directory per bucket and one file per
// object: s3://bucket/a/b.csv is <root>/bucket/a/b.csv, so the same tree can be served over the
// S3 API by an S3 server with a POSIX backend and edited by hand.
//
// Confinement (the store never reads, writes or lists anything outside <root>):
// - A key is stored only if each of its '/'-separated segments is a plain file name: keys with
//   an empty segment (a leading '/', "a//b", a trailing '/'), a "." or ".." segment, a segment
//   longer than 255 bytes, or a segment starting with ".og-tmp." (the store's temporary files)
//   are refused with InvalidInput naming them. They are valid S3 keys; this store cannot hold
//   them as files without them becoming path steps, so it refuses rather than resolves them.
// - Below <root>, symbolic links are never followed: every component is opened relative to its
//   parent's descriptor with O_NOFOLLOW (or in one openat2(RESOLVE_BENEATH |
//   RESOLVE_NO_SYMLINKS) call where the kernel has it), and the opened file's real path is
//   checked to lie under realpath(<root>). A link (or a bucket that is a link) is refused with
//   InvalidInput naming it; List skips links, FIFOs, devices and sockets. <root> itself may be a
//   link (the administrator's choice).
// - A key that names a folder (because other keys continue it) is not an object; a key whose
//   leading part is an object cannot be written (a file cannot also be a folder): InvalidInput.
//
// Writes go to a temporary file in the target folder, are fsync'ed, renamed over the target and
// the folder fsync'ed. Delete removes folders left empty, up to the bucket.
#pragma once

#include <atomic>
#include <memory>
#include <string>
#include <string_view>

#include "common/random.h"
#include "storage/object_store.h"

namespace openglue::storage {

struct LocalObjectStoreOptions {
  std::string root;         // e.g. <data_dir>/s3; created if missing
  bool use_openat2 = true;  // false: always walk component by component (tests the fallback)
};

class LocalObjectStore : public ObjectStore {
 public:
  // InvalidInput if the root cannot be created or is not a folder.
  static Result<std::unique_ptr<LocalObjectStore>> Make(LocalObjectStoreOptions options);

  Status CreateBucket(std::string_view bucket) override;
  Result<ListResult> List(const ListRequest& request) override;
  Result<ObjectInfo> Stat(std::string_view bucket, std::string_view key) override;
  Result<std::string> Read(std::string_view bucket, std::string_view key, int64_t offset,
                           int64_t length) override;
  Status Write(std::string_view bucket, std::string_view key, std::string_view data) override;
  Status Delete(std::string_view bucket, std::string_view key) override;

  // Copies the object to the local file `destination` (created; it must not exist), reading it
  // confined as Read does. For handing an object to a process that opens files by path.
  Status CopyToFile(std::string_view bucket, std::string_view key, const std::string& destination);

  // <root>/bucket/key after the checks above (lexical only: the file need not exist, and a link
  // placed later is not seen). Open objects through the store, not through this path.
  Result<std::string> PathFor(std::string_view bucket, std::string_view key) const;

  // OK if this store can hold `key` (the segment rules above), else InvalidInput naming it.
  static Status ValidateLocalKey(std::string_view bucket, std::string_view key);

  const std::string& root() const { return root_; }

 private:
  LocalObjectStore(LocalObjectStoreOptions options, std::string real_root);
  // Opens the regular file holding the object, confined. EntityNotFound / InvalidInput.
  Result<int> OpenObject(std::string_view bucket, std::string_view key);

  std::string root_;
  std::string real_root_;  // realpath(root_), for the post-open check
  bool use_openat2_;
  std::atomic<bool> openat2_unavailable_{false};
  SystemRandom random_;
};

}  // namespace openglue::storage
