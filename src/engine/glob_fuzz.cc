// Fuzz target: Glue exclusion globs (pattern NUL text) must match in polynomial time.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "engine/scan.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view all(reinterpret_cast<const char*>(data), size);
  if (size > 4096) return 0;
  size_t split = all.find('\0');
  if (split == std::string_view::npos) return 0;
  (void)openglue::engine::GlobMatches(all.substr(0, split), all.substr(split + 1));
  return 0;
}
