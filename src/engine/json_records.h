// JSON records for the engine: splitting text into top-level values, Glue type inference over
// parsed values, and building Arrow arrays from them. Used by the JSON scan; pure functions,
// thread-safe; malformed input is a Status, never an exception or a crash.
#pragma once

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include <arrow/type_fwd.h>
#include <nlohmann/json.hpp>

#include "common/status.h"

namespace openglue::engine {

using JsonValue = nlohmann::ordered_json;

// Where the records are in each top-level value: the value itself (kNone; a top-level array's
// elements are records), `$[*]` (the elements of a top-level array) or `$.field[*]` (the
// elements of the array in `field`).
struct JsonPath {
  enum class Kind { kNone, kRootArray, kFieldArray } kind = Kind::kNone;
  std::string field;
};
// "" -> kNone; "$[*]"; "$.name[*]" (also "$['name'][*]"). InvalidInput for other forms.
Result<JsonPath> ParseJsonPath(std::string_view path);

// Splits `text` (concatenated JSON values separated by whitespace, as in a multi-line JSON file)
// into the texts of its top-level values; with `split_root_arrays`, a top-level array is split
// into the texts of its elements instead. `base_offset` is added to byte offsets in messages.
// InvalidInput ("invalid JSON at byte N: ...") for unbalanced brackets, an unterminated string
// or junk between values. Values themselves are only checked by ParseJsonRecords.
Status SplitJsonValues(std::string_view text, bool split_root_arrays,
                       std::vector<std::string_view>* out);

// Parses one value and appends its records (per `path`) to `records`. InvalidInput with the
// parser's message when the text is not valid JSON or a record is not an object.
Status ParseJsonRecords(std::string_view text, const JsonPath& path,
                        std::vector<JsonValue>* records);

// The Glue type of one value (int/long by range, double, boolean, string, struct, array, null).
std::shared_ptr<arrow::DataType> InferJsonType(const JsonValue& value);

// The struct type of all records (fields in first-appearance order, merged with MergeTypes).
std::shared_ptr<arrow::DataType> InferRecordsType(const std::vector<JsonValue>& records);

// A record batch of `records` with `schema` (typically InferRecordsType's fields): each value
// goes to the choice member of its kind; a value that fits no member becomes null.
Result<std::shared_ptr<arrow::RecordBatch>> BuildJsonBatch(const std::vector<JsonValue>& records,
                                                           const std::shared_ptr<arrow::Schema>& schema);

}  // namespace openglue::engine
