// Glue's glob syntax (Java's PathMatcher glob), one matcher for every module: the engine's
// `exclusions` and DeletePrefix, and a crawler's S3 target Exclusions.
#pragma once

#include <cstddef>
#include <string_view>

namespace openglue {

// True when `text` matches the Glue glob `pattern`: `**` any characters, `*` any characters but
// '/', `?` one character but '/', `[abc]`/`[!a-z]` a class, `{a,b}` alternatives, `\` escapes.
// Time is polynomial in the pattern and text; a pattern longer than kMaxGlobLength matches
// nothing.
inline constexpr size_t kMaxGlobLength = 4096;
bool GlobMatches(std::string_view pattern, std::string_view text);

}  // namespace openglue
