#include "resource/request.h"

namespace openglue::resource {

std::string GetString(const Json& request, const char* member, const std::string& fallback) {
  if (!request.is_object()) return fallback;
  auto it = request.find(member);
  if (it == request.end() || !it->is_string()) return fallback;
  return it->get<std::string>();
}

int64_t GetInt(const Json& request, const char* member, int64_t fallback) {
  if (!request.is_object()) return fallback;
  auto it = request.find(member);
  if (it == request.end() || !it->is_number_integer()) return fallback;
  return it->get<int64_t>();
}

bool GetBool(const Json& request, const char* member, bool fallback) {
  if (!request.is_object()) return fallback;
  auto it = request.find(member);
  if (it == request.end() || !it->is_boolean()) return fallback;
  return it->get<bool>();
}

Json GetObject(const Json& request, const char* member) {
  if (!request.is_object()) return Json::object();
  auto it = request.find(member);
  if (it == request.end() || !it->is_object()) return Json::object();
  return *it;
}

}  // namespace openglue::resource
