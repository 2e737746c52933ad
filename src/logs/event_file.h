// Event files: the on-disk format of a log stream and the primitives to read and write it.
//
// A stream's events are one file, one event per line: "<timestamp_ms>\t<message>\n". Messages
// are valid UTF-8 (sanitized when written, and again when served) and hold no '\n'. Within a
// file timestamps never decrease, so time-range queries binary-search it by byte offset; a
// "boundary" is an offset where an event starts (or the end). Readers hold at most one
// response plus a small buffer in memory, whatever the size of the file.
//
// Also the small POSIX file helpers the rest of the module shares (Fd, PreadFull, ...).
// Thread-compatible: an EventFile is used by one thread; many may read one file at once.
#pragma once

#include <sys/stat.h>

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace openglue::logs {

// CloudWatch's limits: an event is at most 256 KiB including 26 bytes of overhead; a response
// holds at most 1 MB of events and 10,000 of them.
constexpr size_t kEventOverheadBytes = 26;
constexpr size_t kMaxEventBytes = 256 * 1024 - kEventOverheadBytes;
constexpr size_t kMaxResponseBytes = 1024 * 1024;

// ---------------------------------------------------------------------------------------------
// Files

// An owned file descriptor.
class Fd {
 public:
  Fd() = default;
  explicit Fd(int fd) : fd_(fd) {}
  Fd(Fd&& other) noexcept : fd_(std::exchange(other.fd_, -1)) {}
  Fd& operator=(Fd&& other) noexcept;
  Fd(const Fd&) = delete;
  Fd& operator=(const Fd&) = delete;
  ~Fd() { Reset(); }
  int get() const { return fd_; }
  bool valid() const { return fd_ >= 0; }
  void Reset();

 private:
  int fd_ = -1;
};

// Reads up to `n` bytes at `offset`; fewer only at the end of the file. -1 on error.
ssize_t PreadFull(int fd, char* buf, size_t n, uint64_t offset);
// Writes all of `buf`; false on error.
bool WriteFull(int fd, const char* buf, size_t n);
// Reads a file of at most 1 MiB; false if it is missing, unreadable or larger.
bool ReadSmallFile(const std::string& path, std::string* out);
// Writes `path` atomically: a temporary file renamed over it.
bool WriteFileAtomically(const std::string& path, const std::string& content);
int64_t MtimeMillis(const struct stat& st);
// A non-negative decimal of at most 18 digits.
bool ParseInt64(std::string_view text, int64_t* out);

// ---------------------------------------------------------------------------------------------
// Event format

// Appends the events of one message stamped `timestamp` to `out`: the message is sanitized
// (each ill-formed UTF-8 byte becomes U+FFFD, never an error) and cut into pieces of at most
// kMaxEventBytes on character boundaries. An empty message is one empty event.
void AppendEvents(int64_t timestamp, std::string_view message, std::string* out);
// Where to cut raw text longer than one event: at most kMaxEventBytes, not inside a UTF-8
// sequence. `data` must be longer than kMaxEventBytes.
size_t PieceLength(std::string_view data);
// Splits "<ts>\t<message>" (without the newline). A line we did not write gets timestamp 0 and
// the whole line as its message.
void ParseEventLine(std::string_view line, int64_t* ts, std::string_view* message);

// ---------------------------------------------------------------------------------------------
// Reading

struct EventView {
  uint64_t offset = 0;  // where the event's line starts
  uint64_t next = 0;    // where the next one starts
  int64_t timestamp = 0;
  std::string_view message;  // valid until the reader moves on; may be ill-formed UTF-8
};

struct Event {
  uint64_t offset = 0;
  uint64_t next = 0;
  int64_t timestamp = 0;
  std::string message;  // sanitized
};

// An event file opened for reading, cut at its last complete line (the tailer may be appending).
class EventFile {
 public:
  // A missing or empty file is an empty EventFile (end() == 0).
  static EventFile Open(const std::string& path);

  int fd() const { return fd_.get(); }
  uint64_t end() const { return end_; }

  bool IsBoundary(uint64_t x) const;
  // The first boundary at or after `x`.
  uint64_t NextBoundary(uint64_t x) const;
  // Timestamp of the event starting at boundary `b` (< end).
  int64_t TimestampAt(uint64_t b) const;
  // The first event with timestamp >= t (end when none): a binary search over byte offsets.
  uint64_t LowerBound(int64_t t) const;
  // Start of the last event (0 when empty).
  uint64_t LastEventStart() const;

 private:
  // One past the last '\n' in [0, pos), or 0.
  uint64_t LastNewlineBefore(uint64_t pos) const;

  Fd fd_;
  uint64_t end_ = 0;
};

// Reads the events of [pos, limit) in order; `limit` is a boundary. Holds a buffer of about
// `read_size` bytes (more only for one longer line).
class ForwardReader {
 public:
  ForwardReader(const EventFile* file, uint64_t pos, uint64_t limit, size_t read_size)
      : file_(file), pos_(pos), limit_(limit), read_size_(read_size) {}

  uint64_t position() const { return pos_; }
  bool Next(EventView* ev);

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
bool Fits(size_t count, size_t bytes, size_t message_size, size_t max_bytes);

// The first events of [from, to), at most `max_events` and `max_bytes`, messages sanitized.
std::vector<Event> ReadForward(const EventFile& file, uint64_t from, uint64_t to,
                               size_t max_events, size_t max_bytes);
// The events of [lo, hi) nearest to `hi`, at most `max_events` and `max_bytes`, in file order.
std::vector<Event> ReadBackward(const EventFile& file, uint64_t lo, uint64_t hi,
                                size_t max_events, size_t max_bytes);

}  // namespace openglue::logs
