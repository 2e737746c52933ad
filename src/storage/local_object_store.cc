#include "storage/local_object_store.h"

#include <dirent.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/openat2.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <utility>
#include <vector>

#include "common/strings.h"

namespace openglue::storage {

namespace {

constexpr std::string_view kTempPrefix = ".og-tmp.";
constexpr size_t kMaxSegmentBytes = 255;  // NAME_MAX

// Owns a file descriptor.
class Fd {
 public:
  Fd() = default;
  explicit Fd(int fd) : fd_(fd) {}
  Fd(Fd&& other) noexcept : fd_(std::exchange(other.fd_, -1)) {}
  Fd& operator=(Fd&& other) noexcept {
    if (this != &other) {
      Reset();
      fd_ = std::exchange(other.fd_, -1);
    }
    return *this;
  }
  Fd(const Fd&) = delete;
  Fd& operator=(const Fd&) = delete;
  ~Fd() { Reset(); }
  int get() const { return fd_; }
  int release() { return std::exchange(fd_, -1); }
  void Reset() {
    if (fd_ >= 0) ::close(fd_);
    fd_ = -1;
  }

 private:
  int fd_ = -1;
};

std::string Errno(int err) { return std::strerror(err); }

Status LinkRefused(std::string_view bucket, std::string_view key) {
  return Status::InvalidInput(DisplayUri(bucket, key) +
                              ": the path passes through a symbolic link inside the object store; "
                              "the store never follows links");
}

std::vector<std::string> Segments(std::string_view key) {
  std::vector<std::string> out;
  size_t start = 0;
  while (true) {
    size_t slash = key.find('/', start);
    out.emplace_back(key.substr(start, slash == std::string_view::npos ? slash : slash - start));
    if (slash == std::string_view::npos) break;
    start = slash + 1;
  }
  return out;
}

// A directory below `dirfd`, never through a link. ENOENT/ENOTDIR/ELOOP are left in errno.
int OpenDirAt(int dirfd, const std::string& name) {
  return ::openat(dirfd, name.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
}

// Maps a failed component open to a Status.
Status WalkError(int err, std::string_view bucket, std::string_view key) {
  if (err == ELOOP) return LinkRefused(bucket, key);
  if (err == ENOENT || err == ENOTDIR)
    return Status::EntityNotFound("The specified key does not exist: " + DisplayUri(bucket, key));
  if (err == EXDEV)
    return Status::InvalidInput(DisplayUri(bucket, key) + " leaves the object store");
  return Status::Internal(DisplayUri(bucket, key) + ": " + Errno(err));
}

constexpr const char* kGatewayTempDir = ".sgwtmp";

bool IsTempName(std::string_view name) { return StartsWith(name, kTempPrefix); }

std::string EncodeToken(bool is_prefix, const std::string& last) {
  return Base64Encode(std::string(is_prefix ? "p" : "k") + last);
}

Status DecodeToken(const std::string& token, bool* is_prefix, std::string* last) {
  std::string raw;
  if (!Base64Decode(token, &raw) || raw.empty() || (raw[0] != 'p' && raw[0] != 'k'))
    return Status::InvalidInput("The continuation token is not valid");
  *is_prefix = raw[0] == 'p';
  *last = raw.substr(1);
  return Status::OK();
}

int64_t MillisOf(const struct stat& st) {
  return static_cast<int64_t>(st.st_mtim.tv_sec) * 1000 + st.st_mtim.tv_nsec / 1000000;
}

// One page of a sorted walk of a bucket's tree (see List).
class Lister {
 public:
  Lister(const ListRequest& request, int max_keys, bool after_is_prefix, std::string after)
      : prefix_(request.prefix), delimiter_(request.delimiter), max_(max_keys),
        after_is_prefix_(after_is_prefix), after_(std::move(after)) {}

  // Visits the folder open as `dirfd` whose keys start with `key_prefix`, in key order, until
  // the page is full and one more entry was found (done_).
  Status Visit(int dirfd, const std::string& key_prefix) {
    struct Entry {
      std::string sort_key;  // the key, or for a folder its prefix ending in '/'
      std::string name;
      bool is_dir;
      int64_t size;
      int64_t mtime_ms;
    };
    std::vector<Entry> entries;
    {
      int dup_fd = ::fcntl(dirfd, F_DUPFD_CLOEXEC, 0);
      if (dup_fd < 0) return Status::Internal("listing: " + Errno(errno));
      DIR* dir = ::fdopendir(dup_fd);
      if (!dir) {
        ::close(dup_fd);
        return Status::Internal("listing: " + Errno(errno));
      }
      while (struct dirent* e = ::readdir(dir)) {
        std::string name = e->d_name;
        if (name == "." || name == ".." || IsTempName(name) || !IsValidUtf8(name)) continue;
        // The S3 API's gateway (versitygw) keeps multipart parts in progress in
        // <bucket>/.sgwtmp/: not objects, over S3 or here.
        if (key_prefix.empty() && name == kGatewayTempDir) continue;
        struct stat st;
        if (::fstatat(dirfd, name.c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0) continue;
        if (S_ISREG(st.st_mode)) {
          entries.push_back({key_prefix + name, name, false, static_cast<int64_t>(st.st_size),
                             MillisOf(st)});
        } else if (S_ISDIR(st.st_mode)) {
          entries.push_back({key_prefix + name + "/", name, true, 0, 0});
        }  // links, FIFOs, sockets and devices are not objects
      }
      ::closedir(dir);
    }
    std::sort(entries.begin(), entries.end(),
              [](const Entry& a, const Entry& b) { return a.sort_key < b.sort_key; });
    for (const Entry& entry : entries) {
      if (done_) return Status::OK();
      const std::string& s = entry.sort_key;
      if (entry.is_dir) {
        // Every key below starts with s.
        if (!StartsWith(s, prefix_) && !StartsWith(prefix_, s)) continue;
        if (!StartsWith(after_, s) && !after_.empty() && s < after_) continue;
        if (after_is_prefix_ && StartsWith(s, after_)) continue;
        if (!last_prefix_.empty() && StartsWith(s, last_prefix_)) continue;
        std::string common = CommonPrefixOf(s);
        if (!common.empty() && common.size() <= s.size()) {
          // The whole folder rolls up into one common prefix, if it holds any object.
          Fd sub(OpenDirAt(dirfd, entry.name));
          if (sub.get() < 0) continue;
          if (!HasObject(sub.get(), 0)) continue;
          Emit(common, true, nullptr);
          continue;
        }
        Fd sub(OpenDirAt(dirfd, entry.name));
        if (sub.get() < 0) continue;  // replaced by a link or removed meanwhile: skip
        OG_RETURN_NOT_OK(Visit(sub.get(), s));
        continue;
      }
      if (!StartsWith(s, prefix_)) continue;
      if (!after_.empty() && s <= after_) continue;
      if (after_is_prefix_ && StartsWith(s, after_)) continue;
      if (!last_prefix_.empty() && StartsWith(s, last_prefix_)) continue;
      std::string common = CommonPrefixOf(s);
      if (!common.empty()) {
        Emit(common, true, nullptr);
      } else {
        ObjectInfo info{s, entry.size, entry.mtime_ms};
        Emit(s, false, &info);
      }
    }
    return Status::OK();
  }

  ListResult Finish() {
    if (done_) result_.next_continuation = EncodeToken(last_is_prefix_, last_);
    return std::move(result_);
  }

 private:
  // The common prefix `s` rolls up into, or "" if the delimiter does not follow the prefix in s.
  std::string CommonPrefixOf(const std::string& s) const {
    if (delimiter_.empty() || s.size() < prefix_.size()) return "";
    size_t at = s.find(delimiter_, prefix_.size());
    if (at == std::string::npos) return "";
    return s.substr(0, at + delimiter_.size());
  }

  static bool HasObject(int dirfd, int depth) {
    if (depth > 600) return false;  // a 1,024-byte key has at most 512 segments
    int dup_fd = ::fcntl(dirfd, F_DUPFD_CLOEXEC, 0);
    if (dup_fd < 0) return false;
    DIR* dir = ::fdopendir(dup_fd);
    if (!dir) {
      ::close(dup_fd);
      return false;
    }
    bool found = false;
    while (!found) {
      struct dirent* e = ::readdir(dir);
      if (!e) break;
      std::string name = e->d_name;
      if (name == "." || name == ".." || IsTempName(name) || !IsValidUtf8(name)) continue;
      struct stat st;
      if (::fstatat(dirfd, name.c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0) continue;
      if (S_ISREG(st.st_mode)) {
        found = true;
      } else if (S_ISDIR(st.st_mode)) {
        Fd sub(OpenDirAt(dirfd, name));
        if (sub.get() >= 0) found = HasObject(sub.get(), depth + 1);
      }
    }
    ::closedir(dir);
    return found;
  }

  void Emit(const std::string& entry, bool is_prefix, const ObjectInfo* info) {
    if (count_ == max_) {
      done_ = true;  // a further entry exists: this page is full
      return;
    }
    ++count_;
    last_ = entry;
    last_is_prefix_ = is_prefix;
    if (is_prefix) {
      last_prefix_ = entry;
      result_.common_prefixes.push_back(entry);
    } else {
      result_.objects.push_back(*info);
    }
  }

  const std::string& prefix_;
  const std::string& delimiter_;
  const int max_;
  const bool after_is_prefix_;
  const std::string after_;
  int count_ = 0;
  bool done_ = false;
  std::string last_;
  bool last_is_prefix_ = false;
  std::string last_prefix_;
  ListResult result_;
};

}  // namespace

// ---------------------------------------------------------------------------------------------

LocalObjectStore::LocalObjectStore(LocalObjectStoreOptions options, std::string real_root)
    : root_(std::move(options.root)), real_root_(std::move(real_root)),
      use_openat2_(options.use_openat2) {}

Result<std::unique_ptr<LocalObjectStore>> LocalObjectStore::Make(LocalObjectStoreOptions options) {
  if (options.root.empty()) return Status::InvalidInput("The object store needs a root folder");
  std::error_code ec;
  std::filesystem::create_directories(options.root, ec);
  if (ec) return Status::InvalidInput("Cannot create " + options.root + ": " + ec.message());
  char* real = ::realpath(options.root.c_str(), nullptr);
  if (!real) return Status::InvalidInput("Cannot resolve " + options.root + ": " + Errno(errno));
  std::string real_root = real;
  ::free(real);
  if (!std::filesystem::is_directory(real_root, ec))
    return Status::InvalidInput(options.root + " is not a folder");
  return std::unique_ptr<LocalObjectStore>(
      new LocalObjectStore(std::move(options), std::move(real_root)));
}

Status LocalObjectStore::ValidateLocalKey(std::string_view bucket, std::string_view key) {
  OG_RETURN_NOT_OK(ValidateKey(key));
  for (const std::string& segment : Segments(key)) {
    std::string why;
    if (segment.empty()) why = "an empty path segment (a leading, doubled or trailing '/')";
    else if (segment == "." || segment == "..") why = "a \"" + segment + "\" segment";
    else if (segment.size() > kMaxSegmentBytes) why = "a segment longer than 255 bytes";
    else if (IsTempName(segment)) why = "a segment starting with \".og-tmp.\" (reserved)";
    if (!why.empty())
      return Status::InvalidInput(DisplayUri(bucket, key) + ": the embedded object store refuses "
                                  "keys with " + why + ", which would not stay inside the store");
  }
  return Status::OK();
}

Result<std::string> LocalObjectStore::PathFor(std::string_view bucket, std::string_view key) const {
  OG_RETURN_NOT_OK(ValidateBucketName(bucket));
  OG_RETURN_NOT_OK(ValidateLocalKey(bucket, key));
  return root_ + "/" + std::string(bucket) + "/" + std::string(key);
}

namespace {

// Opens <root> (following links: the administrator chose it) and the bucket below it (never a
// link).
Result<Fd> OpenBucketDir(const std::string& root, std::string_view bucket) {
  OG_RETURN_NOT_OK(ValidateBucketName(bucket));
  Fd rootfd(::open(root.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
  if (rootfd.get() < 0) {
    if (errno == ENOENT)
      return Status::EntityNotFound("The specified bucket does not exist: " + std::string(bucket));
    return Status::Internal("Cannot open the object store " + root + ": " + Errno(errno));
  }
  Fd fd(OpenDirAt(rootfd.get(), std::string(bucket)));
  if (fd.get() < 0) {
    int err = errno;
    struct stat st;
    if (::fstatat(rootfd.get(), std::string(bucket).c_str(), &st, AT_SYMLINK_NOFOLLOW) == 0 &&
        S_ISLNK(st.st_mode))
      return Status::InvalidInput("Bucket " + std::string(bucket) +
                                  " is a symbolic link; the object store never follows links");
    if (err == ENOENT || err == ENOTDIR)
      return Status::EntityNotFound("The specified bucket does not exist: " + std::string(bucket));
    return Status::Internal("Cannot open bucket " + std::string(bucket) + ": " + Errno(err));
  }
  return fd;
}

// Walks `segments` below `dirfd` with O_NOFOLLOW; with `create`, makes missing folders.
// `chain` (optional) receives every folder opened, outermost first.
Result<Fd> WalkDirs(int dirfd, const std::vector<std::string>& segments, bool create,
                    std::string_view bucket, std::string_view key, std::vector<Fd>* chain,
                    bool* created) {
  Fd current(::fcntl(dirfd, F_DUPFD_CLOEXEC, 0));
  if (current.get() < 0) return Status::Internal("dup: " + Errno(errno));
  for (const std::string& segment : segments) {
    if (create) {
      if (::mkdirat(current.get(), segment.c_str(), 0755) == 0) {
        if (created) *created = true;
      } else if (errno != EEXIST) {
        return Status::Internal(DisplayUri(bucket, key) + ": cannot create a folder: " +
                                Errno(errno));
      }
    }
    Fd next(OpenDirAt(current.get(), segment));
    if (next.get() < 0) {
      int err = errno;
      struct stat st;
      if (::fstatat(current.get(), segment.c_str(), &st, AT_SYMLINK_NOFOLLOW) == 0 &&
          S_ISLNK(st.st_mode))
        return LinkRefused(bucket, key);
      if (create && err == ENOTDIR)
        return Status::InvalidInput(DisplayUri(bucket, key) + ": a leading part of the key (" +
                                    segment + ") is an object, so it cannot also be a folder");
      return WalkError(err, bucket, key);
    }
    if (chain) chain->push_back(std::move(current));
    current = std::move(next);
  }
  return current;
}

// Whether /proc says `fd` lies under `real_root`. True when /proc cannot tell (not mounted):
// the O_NOFOLLOW walk is the guarantee, this is a second check.
bool UnderRoot(int fd, const std::string& real_root) {
  char link[PATH_MAX + 1];
  std::string proc = "/proc/self/fd/" + std::to_string(fd);
  ssize_t n = ::readlink(proc.c_str(), link, PATH_MAX);
  if (n < 0) return true;
  std::string path(link, static_cast<size_t>(n));
  return path.size() > real_root.size() && StartsWith(path, real_root) &&
         path[real_root.size()] == '/';
}

}  // namespace

Result<int> LocalObjectStore::OpenObject(std::string_view bucket, std::string_view key) {
  OG_RETURN_NOT_OK(ValidateLocalKey(bucket, key));
  OG_ASSIGN_OR_RETURN(Fd bucketfd, OpenBucketDir(root_, bucket));
  std::vector<std::string> segments = Segments(key);
  std::string name = segments.back();
  segments.pop_back();
  Fd dirfd;
  if (segments.empty()) {
    dirfd = Fd(::fcntl(bucketfd.get(), F_DUPFD_CLOEXEC, 0));
  } else if (use_openat2_ && !openat2_unavailable_.load(std::memory_order_relaxed)) {
    // One kernel-confined resolution of the folder: no "..", no links, nothing outside.
    std::string folder(key.substr(0, key.size() - name.size() - 1));
    struct open_how how;
    std::memset(&how, 0, sizeof(how));
    how.flags = O_RDONLY | O_DIRECTORY | O_CLOEXEC;
    how.resolve = RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS;
    long fd = ::syscall(SYS_openat2, bucketfd.get(), folder.c_str(), &how, sizeof(how));
    if (fd < 0 && (errno == ENOSYS || errno == EPERM || errno == E2BIG)) {
      openat2_unavailable_.store(true, std::memory_order_relaxed);  // seccomp or an old kernel
    } else if (fd < 0) {
      return WalkError(errno, bucket, key);
    } else {
      dirfd = Fd(static_cast<int>(fd));
    }
  }
  if (dirfd.get() < 0) {
    OG_ASSIGN_OR_RETURN(dirfd, WalkDirs(bucketfd.get(), segments, false, bucket, key, nullptr,
                                        nullptr));
  }
  // Look before opening: opening a FIFO or a device can block or have effects.
  struct stat before;
  if (::fstatat(dirfd.get(), name.c_str(), &before, AT_SYMLINK_NOFOLLOW) != 0)
    return WalkError(errno, bucket, key);
  if (S_ISLNK(before.st_mode)) return LinkRefused(bucket, key);
  if (S_ISDIR(before.st_mode))
    return Status::EntityNotFound("The specified key does not exist: " + DisplayUri(bucket, key));
  if (!S_ISREG(before.st_mode))
    return Status::InvalidInput(DisplayUri(bucket, key) + " is not a regular file");
  Fd fd(::openat(dirfd.get(), name.c_str(), O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC));
  if (fd.get() < 0) return WalkError(errno, bucket, key);
  struct stat after;
  if (::fstat(fd.get(), &after) != 0) return Status::Internal(Errno(errno));
  // Replaced between the look and the open (an atomic overwrite): still fine if it is a file.
  if (!S_ISREG(after.st_mode))
    return Status::InvalidInput(DisplayUri(bucket, key) + " is not a regular file");
  if (!UnderRoot(fd.get(), real_root_))
    return Status::InvalidInput(DisplayUri(bucket, key) + " leaves the object store");
  return fd.release();
}

Status LocalObjectStore::CreateBucket(std::string_view bucket) {
  OG_RETURN_NOT_OK(ValidateBucketName(bucket));
  Fd rootfd(::open(root_.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
  if (rootfd.get() < 0) return Status::Internal("Cannot open " + root_ + ": " + Errno(errno));
  std::string name(bucket);
  if (::mkdirat(rootfd.get(), name.c_str(), 0755) != 0 && errno != EEXIST)
    return Status::Internal("Cannot create bucket " + name + ": " + Errno(errno));
  struct stat st;
  if (::fstatat(rootfd.get(), name.c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0)
    return Status::Internal("Cannot create bucket " + name + ": " + Errno(errno));
  if (!S_ISDIR(st.st_mode))
    return Status::InvalidInput("Bucket " + name + " exists in the store but is not a folder");
  ::fsync(rootfd.get());
  return Status::OK();
}

Result<ListResult> LocalObjectStore::List(const ListRequest& request) {
  if (request.max_keys < 1) return Status::InvalidInput("max_keys must be at least 1");
  int max_keys = std::min(request.max_keys, kMaxListKeys);
  bool after_is_prefix = false;
  std::string after;
  if (!request.continuation.empty())
    OG_RETURN_NOT_OK(DecodeToken(request.continuation, &after_is_prefix, &after));
  OG_ASSIGN_OR_RETURN(Fd bucketfd, OpenBucketDir(root_, request.bucket));
  Lister lister(request, max_keys, after_is_prefix, after);
  OG_RETURN_NOT_OK(lister.Visit(bucketfd.get(), ""));
  return lister.Finish();
}

Result<ObjectInfo> LocalObjectStore::Stat(std::string_view bucket, std::string_view key) {
  OG_ASSIGN_OR_RETURN(int raw, OpenObject(bucket, key));
  Fd fd(raw);
  struct stat st;
  if (::fstat(fd.get(), &st) != 0) return Status::Internal(Errno(errno));
  return ObjectInfo{std::string(key), static_cast<int64_t>(st.st_size), MillisOf(st)};
}

Result<std::string> LocalObjectStore::Read(std::string_view bucket, std::string_view key,
                                           int64_t offset, int64_t length) {
  if (offset < 0) return Status::InvalidInput("A read offset must not be negative");
  OG_ASSIGN_OR_RETURN(int raw, OpenObject(bucket, key));
  Fd fd(raw);
  struct stat st;
  if (::fstat(fd.get(), &st) != 0) return Status::Internal(Errno(errno));
  int64_t size = st.st_size;
  if (offset > size)
    return Status::InvalidInput("The range starting at " + std::to_string(offset) +
                                " is past the end of " + DisplayUri(bucket, key) + " (" +
                                std::to_string(size) + " bytes)");
  int64_t want = size - offset;
  if (length >= 0) want = std::min(want, length);
  std::string out;
  out.resize(static_cast<size_t>(want));
  int64_t done = 0;
  while (done < want) {
    ssize_t n =
        ::pread(fd.get(), out.data() + done, static_cast<size_t>(want - done), offset + done);
    if (n < 0) {
      if (errno == EINTR) continue;
      return Status::Internal("Reading " + DisplayUri(bucket, key) + ": " + Errno(errno));
    }
    if (n == 0) break;  // truncated meanwhile
    done += n;
  }
  out.resize(static_cast<size_t>(done));
  return out;
}

Status LocalObjectStore::Write(std::string_view bucket, std::string_view key,
                               std::string_view data) {
  OG_RETURN_NOT_OK(ValidateLocalKey(bucket, key));
  std::vector<std::string> segments = Segments(key);
  std::string name = segments.back();
  segments.pop_back();
  // A concurrent Delete may remove a folder this write just walked into; try again then.
  for (int attempt = 0;; ++attempt) {
    OG_ASSIGN_OR_RETURN(Fd bucketfd, OpenBucketDir(root_, bucket));
    bool created = false;
    std::vector<Fd> chain;
    OG_ASSIGN_OR_RETURN(Fd dirfd, WalkDirs(bucketfd.get(), segments, true, bucket, key, &chain,
                                           &created));
    std::string temp = std::string(kTempPrefix) + random_.Hex(8);
    Fd out(::openat(dirfd.get(), temp.c_str(),
                    O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644));
    if (out.get() < 0) {
      if (errno == ENOENT && attempt < 3) continue;
      return Status::Internal("Writing " + DisplayUri(bucket, key) + ": " + Errno(errno));
    }
    auto fail = [&](const std::string& what) {
      int err = errno;
      ::unlinkat(dirfd.get(), temp.c_str(), 0);
      return Status::Internal("Writing " + DisplayUri(bucket, key) + ": " + what + ": " +
                              Errno(err));
    };
    size_t done = 0;
    while (done < data.size()) {
      ssize_t n = ::write(out.get(), data.data() + done, data.size() - done);
      if (n < 0) {
        if (errno == EINTR) continue;
        return fail("write");
      }
      done += static_cast<size_t>(n);
    }
    if (::fsync(out.get()) != 0) return fail("fsync");
    out.Reset();
    if (::renameat(dirfd.get(), temp.c_str(), dirfd.get(), name.c_str()) != 0) {
      int err = errno;
      ::unlinkat(dirfd.get(), temp.c_str(), 0);
      if (err == EISDIR || err == ENOTEMPTY || err == EEXIST)
        return Status::InvalidInput(DisplayUri(bucket, key) + ": other keys continue this key as "
                                    "a folder, so it cannot also be an object");
      return Status::Internal("Writing " + DisplayUri(bucket, key) + ": rename: " + Errno(err));
    }
    ::fsync(dirfd.get());
    if (created) {
      for (const Fd& parent : chain) ::fsync(parent.get());
    }
    return Status::OK();
  }
}

Status LocalObjectStore::Delete(std::string_view bucket, std::string_view key) {
  OG_RETURN_NOT_OK(ValidateLocalKey(bucket, key));
  OG_ASSIGN_OR_RETURN(Fd bucketfd, OpenBucketDir(root_, bucket));
  std::vector<std::string> segments = Segments(key);
  std::string name = segments.back();
  segments.pop_back();
  std::vector<Fd> chain;
  Result<Fd> dir = WalkDirs(bucketfd.get(), segments, false, bucket, key, &chain, nullptr);
  if (!dir.ok()) {
    if (dir.status().code() == StatusCode::kEntityNotFound) return Status::OK();
    return dir.status();
  }
  Fd dirfd = std::move(*dir);
  struct stat st;
  if (::fstatat(dirfd.get(), name.c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0) {
    if (errno == ENOENT) return Status::OK();
    return Status::Internal("Deleting " + DisplayUri(bucket, key) + ": " + Errno(errno));
  }
  if (S_ISDIR(st.st_mode)) return Status::OK();  // a folder is not an object
  if (S_ISLNK(st.st_mode)) return LinkRefused(bucket, key);
  if (!S_ISREG(st.st_mode))
    return Status::InvalidInput(DisplayUri(bucket, key) + " is not a regular file");
  if (::unlinkat(dirfd.get(), name.c_str(), 0) != 0 && errno != ENOENT)
    return Status::Internal("Deleting " + DisplayUri(bucket, key) + ": " + Errno(errno));
  ::fsync(dirfd.get());
  // S3 has no folders: remove the ones this delete left empty, innermost first.
  chain.push_back(std::move(dirfd));
  for (size_t i = segments.size(); i > 0; --i) {
    if (::unlinkat(chain[i - 1].get(), segments[i - 1].c_str(), AT_REMOVEDIR) != 0) break;
    ::fsync(chain[i - 1].get());
  }
  return Status::OK();
}

Status LocalObjectStore::CopyToFile(std::string_view bucket, std::string_view key,
                                    const std::string& destination) {
  OG_ASSIGN_OR_RETURN(int raw, OpenObject(bucket, key));
  Fd in(raw);
  Fd out(::open(destination.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644));
  if (out.get() < 0)
    return Status::Internal("Cannot create " + destination + ": " + Errno(errno));
  char buffer[1 << 16];
  while (true) {
    ssize_t n = ::read(in.get(), buffer, sizeof(buffer));
    if (n < 0) {
      if (errno == EINTR) continue;
      return Status::Internal("Reading " + DisplayUri(bucket, key) + ": " + Errno(errno));
    }
    if (n == 0) break;
    ssize_t done = 0;
    while (done < n) {
      ssize_t w = ::write(out.get(), buffer + done, static_cast<size_t>(n - done));
      if (w < 0) {
        if (errno == EINTR) continue;
        return Status::Internal("Writing " + destination + ": " + Errno(errno));
      }
      done += w;
    }
  }
  return Status::OK();
}

}  // namespace openglue::storage
