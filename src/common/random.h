// Random: every random value (ids, run credentials, request ids) goes through this interface so
// tests can inject a deterministic source. The real one reads the OS's CSPRNG.
#pragma once

#include <cstdint>
#include <string>

namespace openglue {

class Random {
 public:
  virtual ~Random() = default;
  // Fills `out` with `size` random bytes.
  virtual void Fill(void* out, size_t size) = 0;

  uint64_t NextU64() {
    uint64_t v = 0;
    Fill(&v, sizeof(v));
    return v;
  }
  // `bytes` random bytes as lowercase hex (2 * bytes characters).
  std::string Hex(size_t bytes);
  // A random string of `length` characters from `alphabet`, without modulo bias.
  std::string FromAlphabet(std::string_view alphabet, size_t length);
};

// The kernel's CSPRNG (getrandom(2)). Thread-safe.
class SystemRandom : public Random {
 public:
  void Fill(void* out, size_t size) override;
};

// A deterministic generator (splitmix64) for tests. Not thread-safe.
class SeededRandom : public Random {
 public:
  explicit SeededRandom(uint64_t seed) : state_(seed) {}
  void Fill(void* out, size_t size) override;

 private:
  uint64_t state_;
};

}  // namespace openglue
