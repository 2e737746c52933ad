// Small string helpers shared by the modules.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace openglue {

// ASCII lowercase, as Glue folds catalog names.
std::string ToLower(std::string_view s);
std::vector<std::string> Split(std::string_view s, char sep);
std::string Join(const std::vector<std::string>& parts, std::string_view sep);
std::string Trim(std::string_view s);
bool StartsWith(std::string_view s, std::string_view prefix);
std::string HexEncode(std::string_view bytes);
// The value of one hexadecimal digit (either case), or -1.
int HexDigitValue(char c);
std::string Base64Encode(std::string_view bytes);
// Returns false if `text` is not valid base64.
bool Base64Decode(std::string_view text, std::string* out);
// Decodes %XX escapes (either hex case); a '%' not followed by two hex digits is kept
// literally. '+' stays '+'.
std::string PercentDecode(std::string_view text);

// True if `text` is well-formed UTF-8 (no overlong forms, surrogates or values past U+10FFFF).
bool IsValidUtf8(std::string_view text);
// `text` with every ill-formed UTF-8 sequence replaced by U+FFFD: safe to put in JSON. Bytes
// from a process, a file or a client go through this before they reach a document.
std::string SanitizeUtf8(std::string_view text);
// `text` sanitized and cut to at most `max_bytes` bytes on a character boundary.
std::string TruncateUtf8(std::string_view text, size_t max_bytes);
// `text` made one line for a log or an error message, so that a client-chosen name cannot end
// a line or start a forged one: ASCII control characters (newline, carriage return, tab, ...),
// DEL and bytes that are not valid UTF-8 are written as \xNN (hex, upper case), the C1 controls
// and the line and paragraph separators U+2028, U+2029 as \uNNNN. Everything else, backslashes
// included, is kept as it is.
std::string EscapeControlCharacters(std::string_view text);

}  // namespace openglue
