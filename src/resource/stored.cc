#include "resource/stored.h"

namespace openglue::resource {

Result<Json> ParseStored(std::string_view text, const std::string& what) {
  Json doc = ParseJson(text);
  if (!doc.is_object()) return Status::Internal("The stored " + what + " cannot be read.");
  return doc;
}

}  // namespace openglue::resource
