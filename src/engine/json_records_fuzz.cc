// Fuzz target: JSON text through the engine's JSON path (split, parse, infer, build). Any input
// must end in a Status or a valid record batch, never a crash, a hang or an exception.
#include <arrow/api.h>
#undef RETURN_NOT_OK

#include <cstddef>
#include <cstdint>
#include <string_view>

#include "engine/json_records.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace openglue::engine;
  if (size == 0) return 0;
  // The first byte picks the mode: root arrays split or not, and a jsonPath form.
  uint8_t mode = data[0];
  std::string_view text(reinterpret_cast<const char*>(data + 1), size - 1);
  JsonPath path;
  if (mode & 2) path.kind = JsonPath::Kind::kRootArray;
  if (mode & 4) {
    path.kind = JsonPath::Kind::kFieldArray;
    path.field = "items";
  }
  std::vector<std::string_view> values;
  if (!SplitJsonValues(text, (mode & 1) != 0, &values).ok()) return 0;
  std::vector<JsonValue> records;
  for (auto value : values) {
    if (!ParseJsonRecords(value, path, &records).ok()) return 0;
  }
  auto type = InferRecordsType(records);
  auto batch = BuildJsonBatch(records, arrow::schema(type->fields()));
  if (batch.ok() && !(*batch)->ValidateFull().ok()) __builtin_trap();
  return 0;
}
