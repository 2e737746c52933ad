// The JSON document type used across modules (nlohmann::json from Debian).
#pragma once

#include <nlohmann/json.hpp>
#include <string>

namespace openglue {
using Json = nlohmann::json;

// Serializes `value` compactly. Never throws on text: a string holding invalid UTF-8 (from a
// process's output, a file or a client) is written with U+FFFD in place of each bad sequence.
// Use this, not Json::dump(), wherever the document may hold text the server did not write.
inline std::string DumpJson(const Json& value) {
  return value.dump(-1, ' ', false, Json::error_handler_t::replace);
}

// Parses `text` without throwing: a discarded value (is_discarded()) when it is not JSON.
inline Json ParseJson(std::string_view text) {
  return Json::parse(text.begin(), text.end(), nullptr, /*allow_exceptions=*/false);
}

}  // namespace openglue
