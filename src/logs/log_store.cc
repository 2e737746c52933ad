// LogStore over plain files. A run's folder holds:
//
//   <root>/<run_id>/stdout, stderr          raw output, written by the run's process
//   <root>/<run_id>/output.events           one event per line: "<timestamp_ms>\t<message>\n"
//   <root>/<run_id>/error.events            (the messages are valid UTF-8 and hold no '\n')
//   <root>/<run_id>/tail.state              per stream: raw offset consumed, event-file length
//                                           and last timestamp; replaced atomically (rename)
//   <root>/<run_id>/created                 creation time of the stream (ms)
//
// Exactly-once across restarts: the tailer appends events, then records (raw offset, event-file
// length) together in tail.state. When it resumes a run it truncates the event file back to the
// recorded length, so events written after the last record are discarded and made again from
// the raw file, never twice.
//
// Timestamps within a stream never decrease, which lets every time-range query binary-search
// the event file; reads seek by byte offset and hold at most one response (<= 1 MB of messages)
// plus a small read buffer in memory.
//
// Tokens: GetLogEvents returns "f/<offset>" and "b/<offset>", byte offsets of event boundaries in
// the stream's event file. FilterLogEvents returns "<timestamp>:<offset>:<stream>", the merge
// position (timestamp, stream, offset) just after the last event it examined. DescribeLogStreams
// returns "n:<stream>" or "t:<lastEventTimestamp>:<stream>"; DescribeLogGroups the last group's
// name. Stream names cannot contain ':' (the CloudWatch model forbids it), so these parse back
// unambiguously.
#include "jobs/log_store.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <condition_variable>
#include <cstring>
#include <filesystem>
#include <limits>
#include <map>
#include <mutex>
#include <optional>
#include <queue>
#include <set>
#include <string>
#include <string_view>
#include <thread>
#include <utility>
#include <vector>

#include "common/logging.h"
#include "common/strings.h"

namespace openglue::jobs {
namespace {

namespace fs = std::filesystem;

constexpr const char* kOutputGroup = "/aws-glue/jobs/output";
constexpr const char* kErrorGroup = "/aws-glue/jobs/error";

// CloudWatch's limits: an event is at most 256 KiB including 26 bytes of overhead; a response
// holds at most 1 MB of events and 10,000 of them; Describe* pages at most 50 items.
constexpr size_t kEventOverheadBytes = 26;
constexpr size_t kMaxEventBytes = 256 * 1024 - kEventOverheadBytes;
constexpr size_t kMaxResponseBytes = 1024 * 1024;
constexpr int64_t kMaxEventsLimit = 10000;
constexpr int64_t kMaxDescribeLimit = 50;

constexpr size_t kRawChunkBytes = 1024 * 1024;     // one read of a raw output file
constexpr uint64_t kMaxRawBytesPerPoll = 64 << 20;  // per stream, so one noisy run cannot stall
constexpr size_t kEventFlushBytes = 1024 * 1024;    // events are written in batches this large
constexpr uint64_t kFilterScanBytes = 32 << 20;     // events one FilterLogEvents call examines
constexpr size_t kReadBufferBytes = 64 * 1024;
constexpr int64_t kMillisPerDay = 86400000;
constexpr auto kRetentionInterval = std::chrono::seconds(60);

struct StreamKind {
  const char* group;
  const char* raw_file;
  const char* events_file;
  const char* state_key;
};
constexpr int kOutput = 0;
constexpr int kError = 1;
constexpr StreamKind kKinds[2] = {
    {kOutputGroup, "stdout", "output.events", "output"},
    {kErrorGroup, "stderr", "error.events", "error"},
};

constexpr const char* kStateFile = "tail.state";
constexpr const char* kCreatedFile = "created";
constexpr const char* kRootCreatedFile = ".created";

// ---------------------------------------------------------------------------------------------
// Files

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
  bool valid() const { return fd_ >= 0; }
  void Reset() {
    if (fd_ >= 0) close(fd_);
    fd_ = -1;
  }

 private:
  int fd_ = -1;
};

// Reads up to `n` bytes at `offset`; fewer only at the end of the file. -1 on error.
ssize_t PreadFull(int fd, char* buf, size_t n, uint64_t offset) {
  size_t done = 0;
  while (done < n) {
    ssize_t r = pread(fd, buf + done, n - done, static_cast<off_t>(offset + done));
    if (r < 0) {
      if (errno == EINTR) continue;
      return -1;
    }
    if (r == 0) break;
    done += static_cast<size_t>(r);
  }
  return static_cast<ssize_t>(done);
}

bool WriteFull(int fd, const char* buf, size_t n) {
  while (n > 0) {
    ssize_t r = write(fd, buf, n);
    if (r < 0) {
      if (errno == EINTR) continue;
      return false;
    }
    buf += r;
    n -= static_cast<size_t>(r);
  }
  return true;
}

bool ReadSmallFile(const std::string& path, std::string* out) {
  Fd fd(open(path.c_str(), O_RDONLY | O_CLOEXEC));
  if (!fd.valid()) return false;
  out->clear();
  char buf[4096];
  for (;;) {
    ssize_t r = read(fd.get(), buf, sizeof(buf));
    if (r < 0 && errno == EINTR) continue;
    if (r < 0) return false;
    if (r == 0) return true;
    out->append(buf, static_cast<size_t>(r));
    if (out->size() > (1 << 20)) return false;
  }
}

// Writes `path` atomically: a temporary file renamed over it.
bool WriteFileAtomically(const std::string& path, const std::string& content) {
  std::string tmp = path + ".tmp";
  {
    Fd fd(open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644));
    if (!fd.valid() || !WriteFull(fd.get(), content.data(), content.size())) return false;
  }
  return rename(tmp.c_str(), path.c_str()) == 0;
}

int64_t MtimeMillis(const struct stat& st) {
  return static_cast<int64_t>(st.st_mtim.tv_sec) * 1000 + st.st_mtim.tv_nsec / 1000000;
}

bool ParseInt64(std::string_view text, int64_t* out) {
  if (text.empty() || text.size() > 18) return false;
  int64_t v = 0;
  for (char c : text) {
    if (c < '0' || c > '9') return false;
    v = v * 10 + (c - '0');
  }
  *out = v;
  return true;
}

// ---------------------------------------------------------------------------------------------
// Messages

// Appends `in` as valid UTF-8: each byte that does not start a well-formed sequence becomes
// U+FFFD, so every message can be put into a JSON response.
void AppendSanitized(std::string_view in, std::string* out) {
  size_t i = 0;
  const size_t n = in.size();
  while (i < n) {
    unsigned char c = static_cast<unsigned char>(in[i]);
    if (c < 0x80) {
      size_t j = i + 1;
      while (j < n && static_cast<unsigned char>(in[j]) < 0x80) ++j;
      out->append(in.data() + i, j - i);
      i = j;
      continue;
    }
    size_t len = 0;
    uint32_t cp = 0;
    if (c >= 0xC2 && c <= 0xDF) {
      len = 2;
      cp = c & 0x1F;
    } else if (c >= 0xE0 && c <= 0xEF) {
      len = 3;
      cp = c & 0x0F;
    } else if (c >= 0xF0 && c <= 0xF4) {
      len = 4;
      cp = c & 0x07;
    }
    bool ok = len > 0 && i + len <= n;
    for (size_t k = 1; ok && k < len; ++k) {
      unsigned char cc = static_cast<unsigned char>(in[i + k]);
      if ((cc & 0xC0) != 0x80) {
        ok = false;
      } else {
        cp = (cp << 6) | (cc & 0x3F);
      }
    }
    if (ok && len == 3 && (cp < 0x800 || (cp >= 0xD800 && cp <= 0xDFFF))) ok = false;
    if (ok && len == 4 && (cp < 0x10000 || cp > 0x10FFFF)) ok = false;
    if (ok) {
      out->append(in.data() + i, len);
      i += len;
    } else {
      out->append("\xEF\xBF\xBD");
      i += 1;
    }
  }
}

// Where to cut a line longer than one event: at most kMaxEventBytes, not inside a UTF-8
// sequence. `data` is longer than kMaxEventBytes.
size_t PieceLength(std::string_view data) {
  size_t cut = kMaxEventBytes;
  for (int k = 0; k < 3 && (static_cast<unsigned char>(data[cut]) & 0xC0) == 0x80; ++k) --cut;
  return cut;
}

// "<ts>\t<message>" (without the newline).
void ParseEventLine(std::string_view line, int64_t* ts, std::string_view* message) {
  size_t tab = line.find('\t');
  if (tab == std::string_view::npos || !ParseInt64(line.substr(0, tab), ts)) {
    *ts = 0;  // never written by us; shown rather than hidden
    *message = line;
    return;
  }
  *message = line.substr(tab + 1);
}

// ---------------------------------------------------------------------------------------------
// Reading event files

struct EventView {
  uint64_t offset = 0;  // where the event's line starts
  uint64_t next = 0;    // where the next one starts
  int64_t timestamp = 0;
  std::string_view message;  // valid until the reader moves on
};

struct Event {
  uint64_t offset = 0;
  uint64_t next = 0;
  int64_t timestamp = 0;
  std::string message;
};

// An event file opened for reading, cut at its last complete line (the tailer may be appending).
// A byte offset is a "boundary" when an event starts there (or it is the end).
class EventFile {
 public:
  static EventFile Open(const std::string& path) {
    EventFile file;
    file.fd_ = Fd(open(path.c_str(), O_RDONLY | O_CLOEXEC));
    if (!file.fd_.valid()) return file;  // no events yet
    struct stat st;
    if (fstat(file.fd_.get(), &st) != 0 || st.st_size <= 0) return file;
    uint64_t size = static_cast<uint64_t>(st.st_size);
    char last = 0;
    if (PreadFull(file.fd_.get(), &last, 1, size - 1) != 1) return file;
    file.end_ = last == '\n' ? size : file.LastNewlineBefore(size - 1);
    return file;
  }

  int fd() const { return fd_.get(); }
  uint64_t end() const { return end_; }

  bool IsBoundary(uint64_t x) const {
    if (x == 0 || x == end_) return true;
    if (x > end_) return false;
    char c = 0;
    return PreadFull(fd_.get(), &c, 1, x - 1) == 1 && c == '\n';
  }

  // The first boundary at or after `x`.
  uint64_t NextBoundary(uint64_t x) const {
    if (x == 0) return 0;
    if (x >= end_) return end_;
    char buf[4096];
    uint64_t pos = x - 1;
    while (pos < end_) {
      size_t n = static_cast<size_t>(std::min<uint64_t>(sizeof(buf), end_ - pos));
      ssize_t got = PreadFull(fd_.get(), buf, n, pos);
      if (got <= 0) return end_;
      const void* nl = memchr(buf, '\n', static_cast<size_t>(got));
      if (nl != nullptr) return pos + (static_cast<const char*>(nl) - buf) + 1;
      pos += static_cast<uint64_t>(got);
    }
    return end_;
  }

  // Timestamp of the event starting at boundary `b` (< end).
  int64_t TimestampAt(uint64_t b) const {
    char buf[24];
    size_t n = static_cast<size_t>(std::min<uint64_t>(sizeof(buf), end_ - b));
    ssize_t got = PreadFull(fd_.get(), buf, n, b);
    if (got <= 0) return 0;
    std::string_view text(buf, static_cast<size_t>(got));
    int64_t ts = 0;
    size_t tab = text.find('\t');
    if (tab == std::string_view::npos || !ParseInt64(text.substr(0, tab), &ts)) return 0;
    return ts;
  }

  // The first event with timestamp >= t (end when none): a binary search over byte offsets.
  uint64_t LowerBound(int64_t t) const {
    uint64_t lo = 0;     // a boundary; every event before it is < t
    uint64_t limit = end_;  // candidates are the boundaries in [lo, limit)
    uint64_t answer = end_;
    while (lo < limit) {
      uint64_t mid = lo + (limit - lo) / 2;
      uint64_t b = NextBoundary(mid);
      if (b >= limit) {  // no event starts in [mid, limit)
        limit = mid;
        continue;
      }
      if (TimestampAt(b) >= t) {
        answer = b;
        limit = b;
      } else {
        lo = NextBoundary(b + 1);
      }
    }
    return answer;
  }

  // Start of the last event (end > 0).
  uint64_t LastEventStart() const { return end_ == 0 ? 0 : LastNewlineBefore(end_ - 1); }

 private:
  // One past the last '\n' in [0, pos), or 0.
  uint64_t LastNewlineBefore(uint64_t pos) const {
    char buf[4096];
    while (pos > 0) {
      size_t n = static_cast<size_t>(std::min<uint64_t>(sizeof(buf), pos));
      if (PreadFull(fd_.get(), buf, n, pos - n) != static_cast<ssize_t>(n)) return 0;
      const void* nl = memrchr(buf, '\n', n);
      if (nl != nullptr) return pos - n + (static_cast<const char*>(nl) - buf) + 1;
      pos -= n;
    }
    return 0;
  }

  Fd fd_;
  uint64_t end_ = 0;
};

// Reads the events of [pos, limit) in order; `limit` is a boundary.
class ForwardReader {
 public:
  ForwardReader(const EventFile* file, uint64_t pos, uint64_t limit, size_t read_size)
      : file_(file), pos_(pos), limit_(limit), read_size_(read_size) {}

  uint64_t position() const { return pos_; }

  bool Next(EventView* ev) {
    while (pos_ < limit_) {
      uint64_t buf_end = buf_off_ + buf_.size();
      if (pos_ >= buf_off_ && pos_ < buf_end) {
        size_t start = static_cast<size_t>(pos_ - buf_off_);
        const char* base = buf_.data() + start;
        const void* nl = memchr(base, '\n', buf_.size() - start);
        if (nl != nullptr) {
          size_t len = static_cast<size_t>(static_cast<const char*>(nl) - base);
          ev->offset = pos_;
          ev->next = pos_ + len + 1;
          ParseEventLine(std::string_view(base, len), &ev->timestamp, &ev->message);
          pos_ = ev->next;
          return true;
        }
      }
      // Refill from pos_, reading more than last time when one line did not fit.
      uint64_t have = pos_ >= buf_off_ && pos_ < buf_end ? buf_end - pos_ : 0;
      if (pos_ + have >= limit_) return false;  // a line without its newline: not ours
      uint64_t want = std::min<uint64_t>(std::max<uint64_t>(read_size_, have * 2), limit_ - pos_);
      buf_.resize(static_cast<size_t>(want));  // reuses the buffer's capacity
      ssize_t got = PreadFull(file_->fd(), buf_.data(), buf_.size(), pos_);
      if (got <= 0 || static_cast<uint64_t>(got) <= have) {
        buf_.clear();
        return false;
      }
      buf_.resize(static_cast<size_t>(got));
      buf_off_ = pos_;
    }
    return false;
  }

 private:
  const EventFile* file_;
  uint64_t pos_;
  uint64_t limit_;
  size_t read_size_;
  std::string buf_;
  uint64_t buf_off_ = 0;
};

// Whether one more event of `message_size` fits a response already holding `count` events of
// `bytes` bytes. The first event always fits.
bool Fits(size_t count, size_t bytes, size_t message_size, size_t max_bytes) {
  return count == 0 || bytes + message_size + kEventOverheadBytes <= max_bytes;
}

std::vector<Event> ReadForward(const EventFile& file, uint64_t from, uint64_t to,
                               size_t max_events, size_t max_bytes) {
  std::vector<Event> out;
  if (from >= to) return out;
  ForwardReader reader(&file, from, to, 256 * 1024);
  size_t bytes = 0;
  EventView ev;
  while (out.size() < max_events && reader.Next(&ev)) {
    if (!Fits(out.size(), bytes, ev.message.size(), max_bytes)) break;
    bytes += ev.message.size() + kEventOverheadBytes;
    out.push_back(Event{ev.offset, ev.next, ev.timestamp, std::string(ev.message)});
  }
  return out;
}

// The events of [lo, hi) nearest to `hi`, at most `max_events` and `max_bytes`, in file order.
std::vector<Event> ReadBackward(const EventFile& file, uint64_t lo, uint64_t hi,
                                size_t max_events, size_t max_bytes) {
  std::vector<Event> out;
  std::string buf;          // holds [buf_off, buf_off + buf.size())
  uint64_t buf_off = hi;
  uint64_t cur = hi;        // the next event to take ends just before `cur`
  size_t bytes = 0;
  auto load = [&](uint64_t from) {
    buf.resize(static_cast<size_t>(cur - from));
    ssize_t got = PreadFull(file.fd(), buf.data(), buf.size(), from);
    if (got != static_cast<ssize_t>(buf.size())) return false;
    buf_off = from;
    return true;
  };
  while (cur > lo && out.size() < max_events) {
    if (buf.empty() || buf_off >= cur) {
      if (!load(cur - std::min<uint64_t>(kReadBufferBytes, cur - lo))) break;
    }
    size_t newline_index = static_cast<size_t>(cur - 1 - buf_off);  // this event's '\n'
    const void* prev = memrchr(buf.data(), '\n', newline_index);
    if (prev == nullptr && buf_off > lo) {
      // The line starts before the buffer: read further back (at least doubling).
      uint64_t span = std::max<uint64_t>(kReadBufferBytes, 2 * (cur - buf_off));
      if (!load(cur - std::min<uint64_t>(span, cur - lo))) break;
      continue;
    }
    uint64_t start =
        prev == nullptr ? buf_off : buf_off + (static_cast<const char*>(prev) - buf.data()) + 1;
    std::string_view line(buf.data() + (start - buf_off), static_cast<size_t>(cur - 1 - start));
    Event ev;
    std::string_view message;
    ParseEventLine(line, &ev.timestamp, &message);
    if (!Fits(out.size(), bytes, message.size(), max_bytes)) break;
    bytes += message.size() + kEventOverheadBytes;
    ev.offset = start;
    ev.next = cur;
    ev.message = std::string(message);
    out.push_back(std::move(ev));
    cur = start;
  }
  std::reverse(out.begin(), out.end());
  return out;
}

// ---------------------------------------------------------------------------------------------
// Filter patterns: CloudWatch's unstructured term syntax. Terms are separated by spaces and are
// case-sensitive substrings; "a quoted phrase" is one term; every plain term must appear;
// ?term: at least one of the ?terms must appear; -term: the term must not appear.

class FilterPattern {
 public:
  static Result<FilterPattern> Parse(std::string_view text) {
    FilterPattern pattern;
    std::string t = Trim(text);
    if (t.empty()) return pattern;
    if (t[0] == '{' || t[0] == '[' || t[0] == '%') {
      return Status::InvalidInput(
          "Unsupported filter pattern: only terms, \"quoted phrases\", ?optional and -excluded "
          "terms are supported");
    }
    size_t i = 0;
    const size_t n = t.size();
    while (i < n) {
      while (i < n && (t[i] == ' ' || t[i] == '\t')) ++i;
      if (i >= n) break;
      char kind = 0;
      if ((t[i] == '?' || t[i] == '-') && i + 1 < n && t[i + 1] != ' ') kind = t[i++];
      std::string term;
      if (t[i] == '"') {
        ++i;
        bool closed = false;
        while (i < n) {
          if (t[i] == '\\' && i + 1 < n) {
            term += t[i + 1];
            i += 2;
          } else if (t[i] == '"') {
            ++i;
            closed = true;
            break;
          } else {
            term += t[i++];
          }
        }
        if (!closed) return Status::InvalidInput("Invalid filter pattern: unclosed quote");
      } else {
        while (i < n && t[i] != ' ' && t[i] != '\t') term += t[i++];
      }
      if (term.empty()) continue;
      if (kind == '?') {
        pattern.any_.push_back(std::move(term));
      } else if (kind == '-') {
        pattern.none_.push_back(std::move(term));
      } else {
        pattern.all_.push_back(std::move(term));
      }
    }
    return pattern;
  }

  bool Matches(std::string_view message) const {
    for (const std::string& term : all_) {
      if (message.find(term) == std::string_view::npos) return false;
    }
    for (const std::string& term : none_) {
      if (message.find(term) != std::string_view::npos) return false;
    }
    if (any_.empty()) return true;
    for (const std::string& term : any_) {
      if (message.find(term) != std::string_view::npos) return true;
    }
    return false;
  }

 private:
  std::vector<std::string> all_, any_, none_;
};

// ---------------------------------------------------------------------------------------------
// Requests

Status CheckRequest(const Json& request) {
  if (request.is_object() || request.is_null()) return Status::OK();
  return Status::InvalidInput("The request must be a JSON object");
}

const Json* Member(const Json& request, const char* key) {
  if (!request.is_object()) return nullptr;
  auto it = request.find(key);
  if (it == request.end() || it->is_null()) return nullptr;
  return &*it;
}

Status GetString(const Json& request, const char* key, std::optional<std::string>* out) {
  const Json* v = Member(request, key);
  if (v == nullptr) return Status::OK();
  if (!v->is_string()) return Status::InvalidInput(std::string(key) + " must be a string");
  *out = v->get<std::string>();
  return Status::OK();
}

Status GetInt(const Json& request, const char* key, std::optional<int64_t>* out) {
  const Json* v = Member(request, key);
  if (v == nullptr) return Status::OK();
  if (v->is_number_unsigned()) {
    uint64_t u = v->get<uint64_t>();
    if (u > static_cast<uint64_t>(std::numeric_limits<int64_t>::max())) {
      return Status::InvalidInput(std::string(key) + " is out of range");
    }
    *out = static_cast<int64_t>(u);
  } else if (v->is_number_integer()) {
    *out = v->get<int64_t>();
  } else if (v->is_number_float() && v->get<double>() == std::trunc(v->get<double>()) &&
             std::abs(v->get<double>()) < 9.0e18) {
    *out = static_cast<int64_t>(v->get<double>());
  } else {
    return Status::InvalidInput(std::string(key) + " must be an integer");
  }
  return Status::OK();
}

Status GetBool(const Json& request, const char* key, std::optional<bool>* out) {
  const Json* v = Member(request, key);
  if (v == nullptr) return Status::OK();
  if (!v->is_boolean()) return Status::InvalidInput(std::string(key) + " must be a boolean");
  *out = v->get<bool>();
  return Status::OK();
}

Status GetLimit(const Json& request, int64_t max, int64_t* out) {
  std::optional<int64_t> limit;
  OG_RETURN_NOT_OK(GetInt(request, "limit", &limit));
  if (!limit) {
    *out = max;
    return Status::OK();
  }
  if (*limit < 1 || *limit > max) {
    return Status::InvalidInput("1 validation error detected: Value '" + std::to_string(*limit) +
                                "' at 'limit' failed to satisfy constraint: Member must have "
                                "value between 1 and " + std::to_string(max));
  }
  *out = *limit;
  return Status::OK();
}

Status GetTime(const Json& request, const char* key, std::optional<int64_t>* out) {
  OG_RETURN_NOT_OK(GetInt(request, key, out));
  if (*out && **out < 0) return Status::InvalidInput(std::string(key) + " must not be negative");
  return Status::OK();
}

Status InvalidToken() { return Status::InvalidInput("The specified nextToken is invalid."); }
Status NoSuchGroup() { return Status::EntityNotFound("The specified log group does not exist."); }
Status NoSuchStream() { return Status::EntityNotFound("The specified log stream does not exist."); }

// Which stream kind the request's group is: logGroupName or logGroupIdentifier (name or ARN).
Result<int> RequestGroup(const Json& request) {
  std::optional<std::string> name, identifier;
  OG_RETURN_NOT_OK(GetString(request, "logGroupName", &name));
  OG_RETURN_NOT_OK(GetString(request, "logGroupIdentifier", &identifier));
  if (name && identifier) {
    return Status::InvalidInput("LogGroup name and LogGroup identifier are mutually exclusive");
  }
  if (!name && !identifier) {
    return Status::InvalidInput("Either logGroupName or logGroupIdentifier must be specified");
  }
  std::string group = name ? *name : *identifier;
  if (identifier && StartsWith(group, "arn:")) {
    size_t at = group.find(":log-group:");
    if (at == std::string::npos) return NoSuchGroup();
    group = group.substr(at + 11);
    if (group.size() >= 2 && group.compare(group.size() - 2, 2, ":*") == 0) {
      group.resize(group.size() - 2);
    }
  }
  for (int kind = 0; kind < 2; ++kind) {
    if (group == kKinds[kind].group) return kind;
  }
  return NoSuchGroup();
}

bool ValidRunId(std::string_view id) {
  if (id.empty() || id.size() > 512 || id[0] == '.') return false;
  for (char c : id) {
    if (c == '/' || c == ':' || c == '*' || c == '\0' || c == '\n') return false;
  }
  return true;
}

// ---------------------------------------------------------------------------------------------
// Tail state

struct StreamTail {
  uint64_t raw_offset = 0;     // bytes of the raw file turned into events
  uint64_t events_length = 0;  // length of the event file holding exactly those events
  int64_t last_timestamp = 0;
};

struct RunTail {
  StreamTail streams[2];
  bool finished = false;
};

std::string SerializeTail(const RunTail& tail) {
  Json state = {{"finished", tail.finished}};
  for (int kind = 0; kind < 2; ++kind) {
    const StreamTail& s = tail.streams[kind];
    state[kKinds[kind].state_key] = {{"raw_offset", s.raw_offset},
                                     {"events_length", s.events_length},
                                     {"last_timestamp", s.last_timestamp}};
  }
  return DumpJson(state);
}

void ParseTail(const std::string& text, RunTail* tail) {
  Json state = Json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (!state.is_object()) return;
  if (state.contains("finished") && state["finished"].is_boolean()) {
    tail->finished = state["finished"].get<bool>();
  }
  for (int kind = 0; kind < 2; ++kind) {
    auto it = state.find(kKinds[kind].state_key);
    if (it == state.end() || !it->is_object()) continue;
    StreamTail& s = tail->streams[kind];
    auto num = [&](const char* key, auto* out) {
      auto f = it->find(key);
      if (f != it->end() && f->is_number_integer()) {
        *out = f->template get<std::decay_t<decltype(*out)>>();
      }
    };
    num("raw_offset", &s.raw_offset);
    num("events_length", &s.events_length);
    num("last_timestamp", &s.last_timestamp);
  }
}

// ---------------------------------------------------------------------------------------------

class FileLogStore : public LogStore {
 public:
  FileLogStore(std::string root, const Clock* clock, LogStoreOptions options, int64_t created)
      : root_(std::move(root)), clock_(clock), options_(std::move(options)), created_ms_(created) {}

  ~FileLogStore() override { Stop(); }

  std::string StdoutPath(const std::string& run_id) const override {
    EnsureRunDir(run_id);
    return RunDir(run_id) + "/" + kKinds[kOutput].raw_file;
  }
  std::string StderrPath(const std::string& run_id) const override {
    EnsureRunDir(run_id);
    return RunDir(run_id) + "/" + kKinds[kError].raw_file;
  }

  void Follow(const std::string& run_id) override {
    if (!ValidRunId(run_id)) {
      OG_LOG(kWarn, "log store: not following invalid run id '" << run_id << "'");
      return;
    }
    EnsureRunDir(run_id);
    std::lock_guard<std::mutex> lock(mu_);
    followed_.insert(run_id);
  }

  void Finish(const std::string& run_id) override {
    if (!ValidRunId(run_id)) return;
    std::lock_guard<std::mutex> tail_lock(tail_mu_);
    {
      std::lock_guard<std::mutex> lock(mu_);
      followed_.erase(run_id);
    }
    if (!StreamExists(run_id)) {
      tails_.erase(run_id);
      return;
    }
    auto it = tails_.find(run_id);
    if (it == tails_.end()) it = tails_.emplace(run_id, LoadTail(run_id)).first;
    RunTail& tail = it->second;
    bool changed = false;
    for (int kind = 0; kind < 2; ++kind) changed |= TailStream(run_id, kind, &tail, true);
    if (changed || !tail.finished) {
      tail.finished = true;
      SaveTail(run_id, tail);
    }
    tails_.erase(it);
  }

  void Start() override {
    std::lock_guard<std::mutex> lock(mu_);
    if (thread_.joinable()) return;
    stop_ = false;
    thread_ = std::thread([this] { Run(); });
  }

  void Stop() override {
    std::thread thread;
    {
      std::lock_guard<std::mutex> lock(mu_);
      if (!thread_.joinable()) return;
      stop_ = true;
      thread = std::move(thread_);
    }
    cv_.notify_all();
    thread.join();
  }

  void PollOnce() override {
    TailFollowed();
    DeleteExpired();
  }

  Result<Json> DescribeLogGroups(const Json& request) override;
  Result<Json> DescribeLogStreams(const Json& request) override;
  Result<Json> GetLogEvents(const Json& request) override;
  Result<Json> FilterLogEvents(const Json& request) override;

 private:
  std::string RunDir(const std::string& run_id) const { return root_ + "/" + run_id; }
  std::string EventsPath(const std::string& run_id, int kind) const {
    return RunDir(run_id) + "/" + kKinds[kind].events_file;
  }
  std::string GroupArn(int kind) const {
    return "arn:aws:logs:" + options_.region + ":" + options_.account_id + ":log-group:" +
           kKinds[kind].group;
  }

  // Creates the run's folder (and records its creation time) if it does not exist yet.
  void EnsureRunDir(const std::string& run_id) const {
    if (!ValidRunId(run_id)) return;
    std::string dir = RunDir(run_id);
    if (mkdir(dir.c_str(), 0755) == 0) {
      WriteFileAtomically(dir + "/" + kCreatedFile, std::to_string(clock_->NowMillis()));
    } else if (errno != EEXIST) {
      OG_LOG(kWarn, "log store: cannot create " << dir << ": " << std::strerror(errno));
    }
  }

  bool StreamExists(const std::string& name) const {
    if (!ValidRunId(name)) return false;
    struct stat st;
    return stat(RunDir(name).c_str(), &st) == 0 && S_ISDIR(st.st_mode);
  }

  // The run folders, sorted by name.
  std::vector<std::string> ListRuns() const {
    std::vector<std::string> runs;
    DIR* dir = opendir(root_.c_str());
    if (dir == nullptr) return runs;
    while (struct dirent* entry = readdir(dir)) {
      std::string name = entry->d_name;
      if (!ValidRunId(name)) continue;
      if (entry->d_type == DT_DIR || (entry->d_type == DT_UNKNOWN && StreamExists(name))) {
        runs.push_back(std::move(name));
      }
    }
    closedir(dir);
    std::sort(runs.begin(), runs.end());
    return runs;
  }

  int64_t StreamCreationTime(const std::string& run_id) const {
    std::string text;
    int64_t ms = 0;
    if (ReadSmallFile(RunDir(run_id) + "/" + kCreatedFile, &text) && ParseInt64(Trim(text), &ms)) {
      return ms;
    }
    struct stat st;
    if (stat(RunDir(run_id).c_str(), &st) == 0) return MtimeMillis(st);
    return 0;
  }

  // --- tailing (all under tail_mu_) ---

  // Reads the run's tail state and makes its event files agree with it.
  RunTail LoadTail(const std::string& run_id) {
    RunTail tail;
    std::string text;
    if (ReadSmallFile(RunDir(run_id) + "/" + kStateFile, &text)) ParseTail(text, &tail);
    for (int kind = 0; kind < 2; ++kind) {
      StreamTail& s = tail.streams[kind];
      std::string path = EventsPath(run_id, kind);
      struct stat st;
      uint64_t size = stat(path.c_str(), &st) == 0 ? static_cast<uint64_t>(st.st_size) : 0;
      if (size > s.events_length) {
        // Events appended after the last recorded state (the server stopped in between): they
        // are made again from the raw file, so drop them rather than duplicate them.
        if (truncate(path.c_str(), static_cast<off_t>(s.events_length)) != 0) {
          OG_LOG(kWarn, "log store: cannot truncate " << path << ": " << std::strerror(errno));
        }
      } else if (size < s.events_length) {
        // The event file lost its tail (e.g. a crash of the machine): keep what is whole.
        EventFile file = EventFile::Open(path);
        OG_LOG(kWarn, "log store: " << path << " is shorter than recorded; some events of "
                                    << run_id << " are lost");
        if (file.end() < size && truncate(path.c_str(), static_cast<off_t>(file.end())) != 0) {
          OG_LOG(kWarn, "log store: cannot truncate " << path);
        }
        s.events_length = file.end();
      }
    }
    return tail;
  }

  void SaveTail(const std::string& run_id, const RunTail& tail) {
    if (!WriteFileAtomically(RunDir(run_id) + "/" + kStateFile, SerializeTail(tail))) {
      OG_LOG(kWarn, "log store: cannot write the tail state of " << run_id << ": "
                                                                  << std::strerror(errno));
    }
  }

  // Turns new complete lines of one raw file into events (with `final`, also a last line
  // without a newline). Returns whether the state changed (and was saved by the caller).
  bool TailStream(const std::string& run_id, int kind, RunTail* tail, bool final) {
    StreamTail& st = tail->streams[kind];
    std::string raw_path = RunDir(run_id) + "/" + kKinds[kind].raw_file;
    Fd raw(open(raw_path.c_str(), O_RDONLY | O_CLOEXEC));
    if (!raw.valid()) return false;
    struct stat sb;
    if (fstat(raw.get(), &sb) != 0) return false;
    uint64_t size = static_cast<uint64_t>(sb.st_size);
    bool changed = false;
    if (size < st.raw_offset) {
      OG_LOG(kWarn, "log store: " << raw_path << " shrank; continuing from its end");
      st.raw_offset = size;
      changed = true;
    }
    if (size == st.raw_offset) return changed;

    std::string events_path = EventsPath(run_id, kind);
    Fd events(open(events_path.c_str(), O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0644));
    if (!events.valid()) {
      OG_LOG(kWarn, "log store: cannot open " << events_path << ": " << std::strerror(errno));
      return changed;
    }
    // Every event read in this pass is stamped with the time of the read; a stream's timestamps
    // never go backwards (the clock may), which keeps the event files sorted.
    const int64_t ts = std::max(clock_->NowMillis(), st.last_timestamp);
    const std::string ts_prefix = std::to_string(ts) + "\t";
    std::string out;
    auto emit = [&](std::string_view message) {
      out += ts_prefix;
      AppendSanitized(message, &out);
      out += '\n';
    };
    auto emit_line = [&](std::string_view line) {
      while (line.size() > kMaxEventBytes) {
        size_t cut = PieceLength(line);
        emit(line.substr(0, cut));
        line.remove_prefix(cut);
      }
      emit(line);
    };
    uint64_t pos = st.raw_offset;  // consumed: everything before it is in `out` or on disk
    auto flush = [&]() {
      if (out.empty()) return true;
      if (!WriteFull(events.get(), out.data(), out.size())) {
        OG_LOG(kWarn, "log store: cannot write " << events_path << ": " << std::strerror(errno));
        // Leave the file as the state describes it (no half event).
        if (ftruncate(events.get(), static_cast<off_t>(st.events_length)) != 0) {
          OG_LOG(kWarn, "log store: cannot truncate " << events_path);
        }
        out.clear();
        return false;
      }
      st.events_length += out.size();
      st.raw_offset = pos;
      st.last_timestamp = ts;
      changed = true;
      out.clear();
      return true;
    };

    chunk_.resize(kRawChunkBytes);
    const uint64_t stop_at = final ? size : std::min(size, pos + kMaxRawBytesPerPoll);
    bool ok = true;
    while (pos < stop_at) {
      size_t n = static_cast<size_t>(std::min<uint64_t>(kRawChunkBytes, size - pos));
      ssize_t got = PreadFull(raw.get(), chunk_.data(), n, pos);
      if (got <= 0) break;
      std::string_view data(chunk_.data(), static_cast<size_t>(got));
      const bool at_end = pos + static_cast<uint64_t>(got) >= size;
      size_t i = 0;
      while (i < data.size()) {
        const void* nl = memchr(data.data() + i, '\n', data.size() - i);
        if (nl != nullptr) {
          size_t j = static_cast<size_t>(static_cast<const char*>(nl) - data.data());
          emit_line(data.substr(i, j - i));
          i = j + 1;
          continue;
        }
        // A line without its newline yet: whole events can be cut from it already (the same
        // cuts a complete line gets); the rest waits, unless the process has ended.
        std::string_view rest = data.substr(i);
        while (rest.size() > kMaxEventBytes) {
          size_t cut = PieceLength(rest);
          emit(rest.substr(0, cut));
          rest.remove_prefix(cut);
          i += cut;
        }
        if (at_end && final && !rest.empty()) {
          emit(rest);
          i += rest.size();
        }
        break;
      }
      if (i == 0) break;  // only the start of a line is left
      pos += i;
      if (out.size() >= kEventFlushBytes && !flush()) {
        ok = false;
        break;
      }
    }
    if (ok) flush();
    return changed;
  }

  void TailFollowed() {
    std::lock_guard<std::mutex> tail_lock(tail_mu_);
    std::set<std::string> ids;
    {
      std::lock_guard<std::mutex> lock(mu_);
      ids = followed_;
    }
    for (auto it = tails_.begin(); it != tails_.end();) {
      it = ids.count(it->first) ? std::next(it) : tails_.erase(it);
    }
    for (const std::string& run_id : ids) {
      auto it = tails_.find(run_id);
      if (it == tails_.end()) {
        if (!StreamExists(run_id)) EnsureRunDir(run_id);
        it = tails_.emplace(run_id, LoadTail(run_id)).first;
        if (it->second.finished) {
          tails_.erase(it);
          std::lock_guard<std::mutex> lock(mu_);
          followed_.erase(run_id);
          continue;
        }
      }
      bool changed = false;
      for (int kind = 0; kind < 2; ++kind) {
        changed |= TailStream(run_id, kind, &it->second, false);
      }
      if (changed) SaveTail(run_id, it->second);
    }
  }

  void DeleteExpired() {
    if (options_.retention_days <= 0) return;
    std::lock_guard<std::mutex> tail_lock(tail_mu_);
    const int64_t cutoff =
        clock_->NowMillis() - static_cast<int64_t>(options_.retention_days) * kMillisPerDay;
    for (const std::string& run_id : ListRuns()) {
      {
        std::lock_guard<std::mutex> lock(mu_);
        if (followed_.count(run_id)) continue;
      }
      std::string dir = RunDir(run_id);
      struct stat st;
      if (stat(dir.c_str(), &st) != 0) continue;
      int64_t newest = MtimeMillis(st);
      if (DIR* d = opendir(dir.c_str())) {
        while (struct dirent* entry = readdir(d)) {
          if (entry->d_name[0] == '.') continue;  // ".." is the root, touched by every run
          if (fstatat(dirfd(d), entry->d_name, &st, AT_SYMLINK_NOFOLLOW) == 0) {
            newest = std::max(newest, MtimeMillis(st));
          }
        }
        closedir(d);
      }
      if (newest >= cutoff) continue;
      std::error_code ec;
      fs::remove_all(dir, ec);
      if (ec) {
        OG_LOG(kWarn, "log store: cannot delete " << dir << ": " << ec.message());
      } else {
        OG_LOG(kInfo, "log store: deleted the logs of " << run_id << " (retention "
                                                        << options_.retention_days << " days)");
      }
      tails_.erase(run_id);
    }
  }

  void Run() {
    auto next_retention = std::chrono::steady_clock::now();
    std::unique_lock<std::mutex> lock(mu_);
    while (!stop_) {
      cv_.wait_for(lock, std::chrono::milliseconds(options_.poll_interval_ms),
                   [this] { return stop_; });
      if (stop_) break;
      lock.unlock();
      TailFollowed();
      if (std::chrono::steady_clock::now() >= next_retention) {
        DeleteExpired();
        next_retention = std::chrono::steady_clock::now() + kRetentionInterval;
      }
      lock.lock();
    }
  }

  const std::string root_;
  const Clock* const clock_;
  const LogStoreOptions options_;
  const int64_t created_ms_;

  std::mutex mu_;
  std::condition_variable cv_;
  std::set<std::string> followed_;  // GUARDED_BY(mu_)
  bool stop_ = false;               // GUARDED_BY(mu_)
  std::thread thread_;              // GUARDED_BY(mu_)

  // Lock order: tail_mu_ before mu_.
  std::mutex tail_mu_;
  std::map<std::string, RunTail> tails_;  // GUARDED_BY(tail_mu_)
  std::string chunk_;                     // GUARDED_BY(tail_mu_): raw read buffer
};

// ---------------------------------------------------------------------------------------------
// The Logs API

Result<Json> FileLogStore::DescribeLogGroups(const Json& request) {
  OG_RETURN_NOT_OK(CheckRequest(request));
  std::optional<std::string> prefix, pattern, token;
  OG_RETURN_NOT_OK(GetString(request, "logGroupNamePrefix", &prefix));
  OG_RETURN_NOT_OK(GetString(request, "logGroupNamePattern", &pattern));
  OG_RETURN_NOT_OK(GetString(request, "nextToken", &token));
  if (prefix && pattern) {
    return Status::InvalidInput("LogGroup name prefix and LogGroup name pattern are mutually "
                                "exclusive parameters.");
  }
  int64_t limit = 0;
  OG_RETURN_NOT_OK(GetLimit(request, kMaxDescribeLimit, &limit));

  std::vector<int> kinds = {kError, kOutput};  // sorted by group name
  std::vector<int> selected;
  for (int kind : kinds) {
    std::string name = kKinds[kind].group;
    if (prefix && !StartsWith(name, *prefix)) continue;
    if (pattern && name.find(*pattern) == std::string::npos) continue;
    if (token && name <= *token) continue;
    selected.push_back(kind);
  }
  uint64_t stored[2] = {0, 0};
  if (!pattern && !selected.empty()) {
    for (const std::string& run_id : ListRuns()) {
      for (int kind = 0; kind < 2; ++kind) {
        struct stat st;
        if (stat(EventsPath(run_id, kind).c_str(), &st) == 0) stored[kind] += st.st_size;
      }
    }
  }
  Json groups = Json::array();
  size_t count = 0;
  for (; count < selected.size() && static_cast<int64_t>(count) < limit; ++count) {
    int kind = selected[count];
    Json group = {{"logGroupName", kKinds[kind].group},
                  {"creationTime", created_ms_},
                  {"arn", GroupArn(kind) + ":*"}};
    if (!pattern) {
      if (options_.retention_days > 0) group["retentionInDays"] = options_.retention_days;
      group["metricFilterCount"] = 0;
      group["storedBytes"] = stored[kind];
      group["logGroupClass"] = "STANDARD";
      group["logGroupArn"] = GroupArn(kind);
    }
    groups.push_back(std::move(group));
  }
  Json response = {{"logGroups", std::move(groups)}};
  if (count < selected.size()) response["nextToken"] = kKinds[selected[count - 1]].group;
  return response;
}

Result<Json> FileLogStore::DescribeLogStreams(const Json& request) {
  OG_RETURN_NOT_OK(CheckRequest(request));
  OG_ASSIGN_OR_RETURN(int kind, RequestGroup(request));
  std::optional<std::string> prefix, order_by, token;
  std::optional<bool> descending_opt;
  OG_RETURN_NOT_OK(GetString(request, "logStreamNamePrefix", &prefix));
  OG_RETURN_NOT_OK(GetString(request, "orderBy", &order_by));
  OG_RETURN_NOT_OK(GetString(request, "nextToken", &token));
  OG_RETURN_NOT_OK(GetBool(request, "descending", &descending_opt));
  int64_t limit = 0;
  OG_RETURN_NOT_OK(GetLimit(request, kMaxDescribeLimit, &limit));
  bool by_time = false;
  if (order_by) {
    if (*order_by == "LastEventTime") {
      by_time = true;
    } else if (*order_by != "LogStreamName") {
      return Status::InvalidInput("1 validation error detected: Value '" + *order_by +
                                  "' at 'orderBy' failed to satisfy constraint: Member must "
                                  "satisfy enum value set: [LogStreamName, LastEventTime]");
    }
  }
  if (by_time && prefix) {
    return Status::InvalidInput("Cannot order by LastEventTime with a logStreamNamePrefix.");
  }
  const bool descending = descending_opt.value_or(false);

  struct Entry {
    std::string name;
    int64_t last = -1;  // last event's timestamp; -1 without events
  };
  std::vector<Entry> entries;
  for (std::string& name : ListRuns()) {
    if (prefix && !StartsWith(name, *prefix)) continue;
    Entry entry{std::move(name), -1};
    if (by_time) {
      EventFile file = EventFile::Open(EventsPath(entry.name, kind));
      if (file.end() > 0) entry.last = file.TimestampAt(file.LastEventStart());
    }
    entries.push_back(std::move(entry));
  }
  // `before(a, b)`: a is listed before b.
  auto before = [&](const Entry& a, const Entry& b) {
    bool less = by_time ? std::tie(a.last, a.name) < std::tie(b.last, b.name) : a.name < b.name;
    bool greater = by_time ? std::tie(b.last, b.name) < std::tie(a.last, a.name) : b.name < a.name;
    return descending ? greater : less;
  };
  std::sort(entries.begin(), entries.end(), before);

  size_t first = 0;
  if (token) {
    Entry cursor;
    if (StartsWith(*token, "n:") && !by_time) {
      cursor.name = token->substr(2);
    } else if (StartsWith(*token, "t:") && by_time) {
      size_t colon = token->find(':', 2);
      if (colon == std::string::npos) return InvalidToken();
      std::string ts = token->substr(2, colon - 2);
      if (ts == "-1") {
        cursor.last = -1;
      } else if (!ParseInt64(ts, &cursor.last)) {
        return InvalidToken();
      }
      cursor.name = token->substr(colon + 1);
    } else {
      return InvalidToken();
    }
    first = static_cast<size_t>(
        std::upper_bound(entries.begin(), entries.end(), cursor, before) - entries.begin());
  }

  Json streams = Json::array();
  size_t i = first;
  for (; i < entries.size() && static_cast<int64_t>(i - first) < limit; ++i) {
    const std::string& name = entries[i].name;
    EventFile file = EventFile::Open(EventsPath(name, kind));
    Json stream = {{"logStreamName", name},
                   {"creationTime", StreamCreationTime(name)},
                   {"arn", GroupArn(kind) + ":log-stream:" + name},
                   {"storedBytes", file.end()}};
    if (file.end() > 0) {
      int64_t last = file.TimestampAt(file.LastEventStart());
      stream["firstEventTimestamp"] = file.TimestampAt(0);
      stream["lastEventTimestamp"] = last;
      stream["lastIngestionTime"] = last;
    }
    streams.push_back(std::move(stream));
  }
  Json response = {{"logStreams", std::move(streams)}};
  if (i < entries.size() && i > first) {
    const Entry& last = entries[i - 1];
    response["nextToken"] =
        by_time ? "t:" + std::to_string(last.last) + ":" + last.name : "n:" + last.name;
  }
  return response;
}

Result<Json> FileLogStore::GetLogEvents(const Json& request) {
  OG_RETURN_NOT_OK(CheckRequest(request));
  OG_ASSIGN_OR_RETURN(int kind, RequestGroup(request));
  std::optional<std::string> stream, token;
  std::optional<int64_t> start_time, end_time;
  std::optional<bool> start_from_head;
  OG_RETURN_NOT_OK(GetString(request, "logStreamName", &stream));
  OG_RETURN_NOT_OK(GetString(request, "nextToken", &token));
  OG_RETURN_NOT_OK(GetTime(request, "startTime", &start_time));
  OG_RETURN_NOT_OK(GetTime(request, "endTime", &end_time));
  OG_RETURN_NOT_OK(GetBool(request, "startFromHead", &start_from_head));
  int64_t limit = 0;
  OG_RETURN_NOT_OK(GetLimit(request, kMaxEventsLimit, &limit));
  if (!stream) return Status::InvalidInput("logStreamName is required");
  if (!StreamExists(*stream)) return NoSuchStream();

  EventFile file = EventFile::Open(EventsPath(*stream, kind));
  const uint64_t lo = start_time ? file.LowerBound(*start_time) : 0;
  const uint64_t hi = std::max(lo, end_time ? file.LowerBound(*end_time) : file.end());

  bool forward = start_from_head.value_or(false);
  uint64_t at = 0;
  if (token) {
    if (token->size() < 3 || (*token)[1] != '/' || ((*token)[0] != 'f' && (*token)[0] != 'b')) {
      return InvalidToken();
    }
    int64_t offset = 0;
    if (!ParseInt64(std::string_view(*token).substr(2), &offset)) return InvalidToken();
    // An offset past the end can only be stale (the events after it were dropped): clamp it.
    at = std::min<uint64_t>(static_cast<uint64_t>(offset), file.end());
    if (!file.IsBoundary(at)) return InvalidToken();
    forward = (*token)[0] == 'f';
  }

  std::vector<Event> events;
  std::string next_forward, next_backward;
  if (forward) {
    uint64_t from = token ? std::max(at, lo) : lo;
    events = ReadForward(file, from, hi, static_cast<size_t>(limit), kMaxResponseBytes);
    if (events.empty()) {
      // At the end: the same token again, which is how clients know to stop.
      next_forward = token ? *token : "f/" + std::to_string(from);
      next_backward = "b/" + std::to_string(token ? at : from);
    }
  } else {
    uint64_t to = token ? std::min(at, hi) : hi;
    events = ReadBackward(file, lo, std::max(lo, to), static_cast<size_t>(limit),
                          kMaxResponseBytes);
    if (events.empty()) {
      next_backward = token ? *token : "b/" + std::to_string(to);
      next_forward = "f/" + std::to_string(token ? at : to);
    }
  }
  if (!events.empty()) {
    next_forward = "f/" + std::to_string(events.back().next);
    next_backward = "b/" + std::to_string(events.front().offset);
  }
  Json list = Json::array();
  for (Event& ev : events) {
    list.push_back({{"timestamp", ev.timestamp},
                    {"message", std::move(ev.message)},
                    {"ingestionTime", ev.timestamp}});
  }
  return Json{{"events", std::move(list)},
              {"nextForwardToken", next_forward},
              {"nextBackwardToken", next_backward}};
}

Result<Json> FileLogStore::FilterLogEvents(const Json& request) {
  OG_RETURN_NOT_OK(CheckRequest(request));
  OG_ASSIGN_OR_RETURN(int kind, RequestGroup(request));
  std::optional<std::string> prefix, pattern_text, token;
  std::optional<int64_t> start_time, end_time;
  OG_RETURN_NOT_OK(GetString(request, "logStreamNamePrefix", &prefix));
  OG_RETURN_NOT_OK(GetString(request, "filterPattern", &pattern_text));
  OG_RETURN_NOT_OK(GetString(request, "nextToken", &token));
  OG_RETURN_NOT_OK(GetTime(request, "startTime", &start_time));
  OG_RETURN_NOT_OK(GetTime(request, "endTime", &end_time));
  int64_t limit = 0;
  OG_RETURN_NOT_OK(GetLimit(request, kMaxEventsLimit, &limit));
  std::optional<std::set<std::string>> names;
  if (const Json* list = Member(request, "logStreamNames")) {
    if (!list->is_array() || list->empty() || list->size() > 100) {
      return Status::InvalidInput("logStreamNames must be a list of 1 to 100 stream names");
    }
    names.emplace();
    for (const Json& name : *list) {
      if (!name.is_string()) return Status::InvalidInput("logStreamNames must hold strings");
      names->insert(name.get<std::string>());
    }
  }
  if (names && prefix) {
    return Status::InvalidInput(
        "logStreamNames and logStreamNamePrefix are mutually exclusive parameters.");
  }
  OG_ASSIGN_OR_RETURN(FilterPattern pattern, FilterPattern::Parse(pattern_text.value_or("")));

  // The resume position: the (timestamp, stream, offset) just after the last event examined.
  bool resume = false;
  int64_t cursor_ts = 0;
  int64_t cursor_next = 0;
  std::string cursor_stream;
  if (token) {
    size_t a = token->find(':');
    size_t b = a == std::string::npos ? a : token->find(':', a + 1);
    if (b == std::string::npos || !ParseInt64(std::string_view(*token).substr(0, a), &cursor_ts) ||
        !ParseInt64(std::string_view(*token).substr(a + 1, b - a - 1), &cursor_next)) {
      return InvalidToken();
    }
    cursor_stream = token->substr(b + 1);
    if (!ValidRunId(cursor_stream)) return InvalidToken();
    resume = true;
  }

  struct Source {
    std::string name;
    EventFile file;
    std::unique_ptr<ForwardReader> reader;
    EventView current;
    bool done = true;
  };
  std::vector<Source> sources;
  for (std::string& name : ListRuns()) {
    if (names && !names->count(name)) continue;
    if (prefix && !StartsWith(name, *prefix)) continue;
    Source source;
    source.name = std::move(name);
    source.file = EventFile::Open(EventsPath(source.name, kind));
    sources.push_back(std::move(source));
  }
  for (Source& source : sources) {
    const EventFile& file = source.file;
    if (file.end() == 0) continue;
    uint64_t from = start_time ? file.LowerBound(*start_time) : 0;
    // endTime is inclusive here (unlike GetLogEvents).
    uint64_t to = end_time && *end_time < std::numeric_limits<int64_t>::max()
                      ? file.LowerBound(*end_time + 1)
                      : file.end();
    if (resume) {
      uint64_t after;
      if (source.name < cursor_stream) {
        after = file.LowerBound(cursor_ts + 1);
      } else if (source.name > cursor_stream) {
        after = file.LowerBound(cursor_ts);
      } else {
        after = std::min<uint64_t>(static_cast<uint64_t>(cursor_next), file.end());
        if (!file.IsBoundary(after)) return InvalidToken();
      }
      from = std::max(from, after);
    }
    if (from >= to) continue;
    source.reader = std::make_unique<ForwardReader>(&file, from, to, 16 * 1024);
    source.done = !source.reader->Next(&source.current);
  }

  // Merge by (timestamp, stream name, offset); sources are sorted by name.
  auto later = [&](size_t a, size_t b) {
    const EventView& x = sources[a].current;
    const EventView& y = sources[b].current;
    return std::tie(x.timestamp, a, x.offset) > std::tie(y.timestamp, b, y.offset);
  };
  std::priority_queue<size_t, std::vector<size_t>, decltype(later)> heap(later);
  for (size_t i = 0; i < sources.size(); ++i) {
    if (!sources[i].done) heap.push(i);
  }
  Json events = Json::array();
  size_t count = 0;
  size_t bytes = 0;
  uint64_t scanned = 0;
  std::string last_position;
  while (!heap.empty()) {
    size_t i = heap.top();
    Source& source = sources[i];
    const EventView& ev = source.current;
    const bool match = pattern.Matches(ev.message);
    if (match && !Fits(count, bytes, ev.message.size(), kMaxResponseBytes)) break;
    heap.pop();
    if (match) {
      events.push_back({{"logStreamName", source.name},
                        {"timestamp", ev.timestamp},
                        {"message", std::string(ev.message)},
                        {"ingestionTime", ev.timestamp},
                        {"eventId", source.name + ":" + std::to_string(ev.offset)}});
      ++count;
      bytes += ev.message.size() + kEventOverheadBytes;
    }
    scanned += ev.next - ev.offset;
    last_position =
        std::to_string(ev.timestamp) + ":" + std::to_string(ev.next) + ":" + source.name;
    if (source.reader->Next(&source.current)) {
      heap.push(i);
    } else {
      source.done = true;
    }
    if (static_cast<int64_t>(count) >= limit || scanned >= kFilterScanBytes) break;
  }
  Json searched = Json::array();
  for (const Source& source : sources) {
    searched.push_back({{"logStreamName", source.name}, {"searchedCompletely", source.done}});
  }
  Json response = {{"events", std::move(events)}, {"searchedLogStreams", std::move(searched)}};
  if (!heap.empty()) response["nextToken"] = last_position;
  return response;
}

}  // namespace

Result<std::unique_ptr<LogStore>> LogStore::Make(const std::string& root, const Clock* clock,
                                                 LogStoreOptions options) {
  if (clock == nullptr) return Status::InvalidInput("LogStore needs a clock");
  if (root.empty()) return Status::InvalidInput("LogStore needs a root directory");
  if (options.poll_interval_ms < 1) return Status::InvalidInput("poll_interval_ms must be >= 1");
  if (options.retention_days < 0) return Status::InvalidInput("retention_days must be >= 0");
  std::error_code ec;
  fs::create_directories(root, ec);
  if (ec || !fs::is_directory(root, ec)) {
    return Status::Internal("Cannot create the log directory '" + root + "': " + ec.message());
  }
  std::string root_dir = root;
  while (root_dir.size() > 1 && root_dir.back() == '/') root_dir.pop_back();
  // The groups' creation time: when this log directory was first used.
  std::string created_path = root_dir + "/" + kRootCreatedFile;
  std::string text;
  int64_t created = 0;
  if (!ReadSmallFile(created_path, &text) || !ParseInt64(Trim(text), &created)) {
    created = clock->NowMillis();
    if (!WriteFileAtomically(created_path, std::to_string(created))) {
      return Status::Internal("Cannot write to the log directory '" + root + "': " +
                              std::strerror(errno));
    }
  }
  return std::unique_ptr<LogStore>(
      std::make_unique<FileLogStore>(std::move(root_dir), clock, std::move(options), created));
}

}  // namespace openglue::jobs
