// libFuzzer target: the filter-pattern parser and matcher. The input is a pattern, a NUL byte
// and a message (no NUL: the whole input is the pattern, matched against itself). Nothing may
// crash, and a pattern that parses must match in time linear in the message.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "logs/filter_pattern.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view input(reinterpret_cast<const char*>(data), size);
  size_t nul = input.find('\0');
  std::string_view pattern = input.substr(0, nul);
  std::string_view message = nul == std::string_view::npos ? input : input.substr(nul + 1);
  openglue::Result<openglue::logs::FilterPattern> parsed =
      openglue::logs::FilterPattern::Parse(pattern);
  if (parsed.ok()) {
    (void)parsed->Matches(message);
    (void)parsed->Matches(pattern);
  }
  return 0;
}
