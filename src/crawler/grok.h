// Grok patterns for custom grok classifiers: `%{NAME:field:type}` expanded from a built-in
// library (WORD, INT, NUMBER, IP, TIMESTAMP_ISO8601, LOGLEVEL, GREEDYDATA, ... docs/crawlers.md)
// and the classifier's CustomPatterns ("NAME regex" lines), compiled with RE2 (linear time: a
// user's pattern cannot blow up).
#pragma once

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "common/status.h"
#include "crawler/inference.h"

namespace openglue::crawler {

class GrokPattern {
 public:
  // InvalidInput naming the problem: an unknown pattern name, a cycle, a regex RE2 refuses.
  static Result<GrokPattern> Make(const std::string& pattern, const std::string& custom_patterns);
  GrokPattern(GrokPattern&&) noexcept;
  GrokPattern& operator=(GrokPattern&&) noexcept;
  ~GrokPattern();

  // The named fields with their types (`:int` int, `:long` bigint, `:float`/`:double` double,
  // `:boolean`, else string), in pattern order.
  const Schema& schema() const;
  // Whether `line` matches the whole pattern.
  bool Matches(std::string_view line) const;

 private:
  GrokPattern();
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

// A text sample classified by a grok classifier: InvalidInput unless every non-blank line of the
// sample (a cut last line aside) matches.
Result<TextSample> InferGrok(std::string_view text, bool complete, const GrokPattern& pattern,
                             const std::string& classification);

}  // namespace openglue::crawler
