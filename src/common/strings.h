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
std::string Base64Encode(std::string_view bytes);
// Returns false if `text` is not valid base64.
bool Base64Decode(std::string_view text, std::string* out);

}  // namespace openglue
