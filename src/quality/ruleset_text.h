// The server's look at a DQDL ruleset: a cheap structural check and the rule count that
// ListDataQualityRulesets reports. The full parse (rule types, thresholds, expressions) is the
// Python runtime's (awsgluedq); the server only makes sure a stored ruleset has a rules list.
#pragma once

#include <cstdint>
#include <string_view>

#include "common/status.h"

namespace openglue::quality {

// Checks that `dqdl` is not blank and holds the word `Rules` (outside quoted strings and
// outside any brackets), followed by `=` (optional) and a `[` whose matching `]` closes it.
// Returns the number of top-level rules in that list: the non-blank pieces between commas at
// bracket, parenthesis and brace depth 0 outside quoted strings ("..." or '...', with
// backslash escapes); `#` outside quoted strings starts a comment up to the end of the line.
// InvalidInput saying what is wrong otherwise: blank, no `Rules` list, no `[` after `Rules`,
// an unclosed `[` or string, or a `]` / `)` that closes nothing.
Result<int64_t> CheckRuleset(std::string_view dqdl);

}  // namespace openglue::quality
