#include "logs/event_file.h"

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <unistd.h>

#include <algorithm>

#include "common/strings.h"

namespace openglue::logs {

// ---------------------------------------------------------------------------------------------
// Files

Fd& Fd::operator=(Fd&& other) noexcept {
  if (this != &other) {
    Reset();
    fd_ = std::exchange(other.fd_, -1);
  }
  return *this;
}

void Fd::Reset() {
  if (fd_ >= 0) close(fd_);
  fd_ = -1;
}

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
// Event format

namespace {

// The longest prefix of valid UTF-8 `text` of at most `max` bytes that ends on a character
// boundary (`text` is longer than `max`).
size_t CharBoundaryAtMost(std::string_view text, size_t max) {
  size_t cut = max;
  while (cut > 0 && (static_cast<unsigned char>(text[cut]) & 0xC0) == 0x80) --cut;
  return cut;
}

}  // namespace

void AppendEvents(int64_t timestamp, std::string_view message, std::string* out) {
  // Sanitizing can grow a message (one bad byte becomes three), so cut after it.
  const std::string clean = SanitizeUtf8(message);
  std::string_view rest = clean;
  const std::string prefix = std::to_string(timestamp) + "\t";
  do {
    size_t n = rest.size() > kMaxEventBytes ? CharBoundaryAtMost(rest, kMaxEventBytes)
                                            : rest.size();
    out->append(prefix);
    out->append(rest.data(), n);
    out->push_back('\n');
    rest.remove_prefix(n);
  } while (!rest.empty());
}

size_t PieceLength(std::string_view data) {
  size_t cut = kMaxEventBytes;
  for (int k = 0; k < 3 && (static_cast<unsigned char>(data[cut]) & 0xC0) == 0x80; ++k) --cut;
  return cut;
}

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
// EventFile

EventFile EventFile::Open(const std::string& path) {
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

bool EventFile::IsBoundary(uint64_t x) const {
  if (x == 0 || x == end_) return true;
  if (x > end_) return false;
  char c = 0;
  return PreadFull(fd_.get(), &c, 1, x - 1) == 1 && c == '\n';
}

uint64_t EventFile::NextBoundary(uint64_t x) const {
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

int64_t EventFile::TimestampAt(uint64_t b) const {
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

uint64_t EventFile::LowerBound(int64_t t) const {
  uint64_t lo = 0;        // a boundary; every event before it is < t
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

uint64_t EventFile::LastEventStart() const {
  return end_ == 0 ? 0 : LastNewlineBefore(end_ - 1);
}

uint64_t EventFile::LastNewlineBefore(uint64_t pos) const {
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

// ---------------------------------------------------------------------------------------------
// Readers

bool ForwardReader::Next(EventView* ev) {
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
    out.push_back(Event{ev.offset, ev.next, ev.timestamp, SanitizeUtf8(ev.message)});
  }
  return out;
}

std::vector<Event> ReadBackward(const EventFile& file, uint64_t lo, uint64_t hi,
                                size_t max_events, size_t max_bytes) {
  constexpr size_t kReadBufferBytes = 64 * 1024;
  std::vector<Event> out;
  std::string buf;  // holds [buf_off, buf_off + buf.size())
  uint64_t buf_off = hi;
  uint64_t cur = hi;  // the next event to take ends just before `cur`
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
    ev.message = SanitizeUtf8(message);
    out.push_back(std::move(ev));
    cur = start;
  }
  std::reverse(out.begin(), out.end());
  return out;
}

}  // namespace openglue::logs
