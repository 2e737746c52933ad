// Clock: every read of the time goes through this interface so tests can drive it.
#pragma once

#include <atomic>
#include <cstdint>
#include <string>

namespace openglue {

class Clock {
 public:
  virtual ~Clock() = default;
  // Milliseconds since the Unix epoch.
  virtual int64_t NowMillis() const = 0;
  // Seconds since the Unix epoch, as Glue's wire timestamps are (fractional).
  double NowSeconds() const { return static_cast<double>(NowMillis()) / 1000.0; }
};

// The real wall clock. Thread-safe.
class SystemClock : public Clock {
 public:
  int64_t NowMillis() const override;
};

// A clock that only moves when told to. Thread-safe.
class FakeClock : public Clock {
 public:
  explicit FakeClock(int64_t start_millis) : now_(start_millis) {}
  int64_t NowMillis() const override { return now_.load(); }
  void Advance(int64_t millis) { now_ += millis; }
  void Set(int64_t millis) { now_ = millis; }

 private:
  std::atomic<int64_t> now_;
};

// `epoch_seconds` as an HTTP Date header value, RFC 9110's IMF-fixdate in GMT:
// "Sun, 06 Nov 1994 08:49:37 GMT".
std::string FormatHttpDate(int64_t epoch_seconds);

}  // namespace openglue
