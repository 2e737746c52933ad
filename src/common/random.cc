#include "common/random.h"

#include <sys/random.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>

namespace openglue {

std::string Random::Hex(size_t bytes) {
  static const char kDigits[] = "0123456789abcdef";
  std::string raw(bytes, '\0');
  Fill(raw.data(), raw.size());
  std::string out;
  out.reserve(bytes * 2);
  for (unsigned char c : raw) {
    out.push_back(kDigits[c >> 4]);
    out.push_back(kDigits[c & 15]);
  }
  return out;
}

std::string Random::FromAlphabet(std::string_view alphabet, size_t length) {
  std::string out;
  out.reserve(length);
  // Rejection sampling: take a byte only when it falls in the largest multiple of the
  // alphabet's size, so every character is equally likely.
  const unsigned limit = 256 - (256 % alphabet.size());
  unsigned char buffer[64];
  while (out.size() < length) {
    Fill(buffer, sizeof(buffer));
    for (unsigned char c : buffer) {
      if (c >= limit) continue;
      out.push_back(alphabet[c % alphabet.size()]);
      if (out.size() == length) break;
    }
  }
  return out;
}

void SystemRandom::Fill(void* out, size_t size) {
  auto* p = static_cast<unsigned char*>(out);
  while (size > 0) {
    ssize_t n = getrandom(p, size, 0);
    if (n < 0) {
      if (errno == EINTR) continue;
      // Without the kernel's CSPRNG no credential can be issued safely.
      std::abort();
    }
    p += n;
    size -= static_cast<size_t>(n);
  }
}

void SeededRandom::Fill(void* out, size_t size) {
  auto* p = static_cast<unsigned char*>(out);
  while (size > 0) {
    uint64_t z = (state_ += 0x9E3779B97F4A7C15ULL);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
    z ^= z >> 31;
    size_t n = size < sizeof(z) ? size : sizeof(z);
    std::memcpy(p, &z, n);
    p += n;
    size -= n;
  }
}

}  // namespace openglue
