// FilterPattern: CloudWatch Logs' unstructured filter-pattern language, parsed once per request
// and matched against each event's message.
//
// Syntax: terms separated by spaces or tabs are case-sensitive substrings; "a quoted phrase"
// (with \" and \\ escapes) is one term; every plain term must appear; of the ?terms at least one
// must appear; no -term may appear. JSON ({...}), space-delimited ([...]) and regex (%...%)
// patterns are refused as unsupported.
//
// Cost: a pattern is at most kMaxFilterPatternLength characters (CloudWatch's limit); longer
// ones are refused before any work. Matching runs one Aho-Corasick automaton over the message:
// time linear in the message plus the pattern, whatever the terms, never backtracking.
//
// Thread-compatible: Matches() uses scratch state, so one pattern serves one thread at a time.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "common/status.h"

namespace openglue::logs {

// CloudWatch's limit on filterPattern, in characters.
constexpr size_t kMaxFilterPatternLength = 1024;

class FilterPattern {
 public:
  // InvalidInput for a pattern over the limit, an unclosed quote or an unsupported syntax.
  // The empty pattern matches everything.
  static Result<FilterPattern> Parse(std::string_view text);

  bool Matches(std::string_view message) const;

  // For tests: the parsed terms.
  const std::vector<std::string>& terms() const { return terms_; }

 private:
  void Build();

  std::vector<std::string> terms_;       // distinct terms
  std::vector<uint32_t> all_, any_, none_;  // indexes into terms_

  // The automaton: delta_[state * 256 + byte] -> state; state 0 is the root.
  std::vector<uint32_t> delta_;
  std::vector<int32_t> term_at_;  // the term ending at a state, or -1
  std::vector<uint32_t> output_;  // nearest proper-suffix state where a term ends (0: none)
  mutable std::vector<uint32_t> found_;  // term -> generation in which it was found
  mutable uint32_t generation_ = 0;
};

}  // namespace openglue::logs
