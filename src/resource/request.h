// Request getters shared by every service: typed members of a Glue request document, with a
// fallback when the member is absent, null or of another type (the api module has already
// checked types against the service model, so a mismatch only happens for callers inside the
// server). None of them throws.
#pragma once

#include <cstdint>
#include <string>

#include "common/json.h"

namespace openglue::resource {

// A string member of `request`, or `fallback` when absent or not a string.
std::string GetString(const Json& request, const char* member, const std::string& fallback = "");
// An integer member, or `fallback`.
int64_t GetInt(const Json& request, const char* member, int64_t fallback);
// A boolean member, or `fallback`.
bool GetBool(const Json& request, const char* member, bool fallback);
// An object member, or an empty object.
Json GetObject(const Json& request, const char* member);

}  // namespace openglue::resource
