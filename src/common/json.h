// The JSON document type used across modules (nlohmann::json from Debian).
#pragma once

#include <nlohmann/json.hpp>

namespace openglue {
using Json = nlohmann::json;
}  // namespace openglue
