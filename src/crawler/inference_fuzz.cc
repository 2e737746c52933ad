// Fuzz target: the crawler's text classifiers (CSV, JSON, JSON path, grok) on any bytes a data
// lake may hold must return a Result, never crash or hang. The first byte picks what runs.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "crawler/grok.h"
#include "crawler/inference.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size < 1 || size > 65536) return 0;
  std::string_view text(reinterpret_cast<const char*>(data) + 1, size - 1);
  const bool complete = data[0] & 1;
  switch ((data[0] >> 1) % 5) {
    case 0: (void)openglue::crawler::InferCsv(text, complete); break;
    case 1: (void)openglue::crawler::InferJson(text, complete); break;
    case 2: {
      // "path\n document"
      size_t nl = text.find('\n');
      if (nl == std::string_view::npos) return 0;
      (void)openglue::crawler::InferJsonPath(text.substr(nl + 1), complete, std::string(text.substr(0, nl)));
      break;
    }
    case 4: (void)openglue::crawler::InferXml(text, complete, "row", "xml"); break;
    default: {
      // "pattern\n lines"
      size_t nl = text.find('\n');
      if (nl == std::string_view::npos) return 0;
      auto pattern = openglue::crawler::GrokPattern::Make(std::string(text.substr(0, nl)), "");
      if (pattern.ok()) (void)openglue::crawler::InferGrok(text.substr(nl + 1), complete, *pattern, "x");
      break;
    }
  }
  return 0;
}
