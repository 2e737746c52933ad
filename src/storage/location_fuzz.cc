// libFuzzer target: any bytes as a user-given location (ScriptLocation, --extra-py-files entry).
// ParseLocation and the embedded store's key rules must never crash, and a key they accept must
// never hold a path step.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>

#include "storage/local_object_store.h"
#include "storage/location.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string text(reinterpret_cast<const char*>(data), size);
  auto location = openglue::storage::ParseLocation(text);
  if (!location.ok() || location->scheme != openglue::storage::LocationScheme::kObject) return 0;
  if (!openglue::storage::LocalObjectStore::ValidateLocalKey(location->bucket, location->key).ok())
    return 0;
  const std::string& key = location->key;
  std::string wrapped = "/" + key + "/";
  if (wrapped.find("/../") != std::string::npos || wrapped.find("/./") != std::string::npos ||
      wrapped.find("//") != std::string::npos || key.find('\0') != std::string::npos)
    std::abort();  // an accepted key that is a path step
  return 0;
}
