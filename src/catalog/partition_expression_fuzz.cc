// libFuzzer target for the GetPartitions expression parser and evaluator
// (catalog/partition_filter.h). The input is an expression; it is compiled against a table with
// a key of every type expressions know (and one they do not), and, when it compiles, evaluated
// against partitions whose values come from the same input, so parsing, literal conversion,
// planning (RequiredEqualities) and matching all run on hostile text. Any crash, sanitizer
// report or timeout is a defect: the parser must answer every input with a filter or
// InvalidInput.
//
// Seed corpus: src/catalog/testdata/fuzz/partition_expression/ (expressions from the tests).
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "catalog/partition_filter.h"
#include "common/status.h"

namespace {

const std::vector<openglue::catalog::PartitionKey>& Keys() {
  static const std::vector<openglue::catalog::PartitionKey> keys = {
      {"year", "int"},         {"month", "int"},     {"region", "string"},
      {"dt", "date"},          {"ts", "timestamp"},  {"d", "decimal(10,2)"},
      {"v", "varchar(5)"},     {"b", "bigint"},      {"flag", "boolean"},
      {"int_col", "int"},      {"s", "string"},      {"timestamp_col", "timestamp"}};
  return keys;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using openglue::catalog::CanonicalPartitionValue;
  using openglue::catalog::PartitionFilter;
  std::string_view input(reinterpret_cast<const char*>(data), size);
  const auto& keys = Keys();

  // The whole input as an expression.
  auto filter = PartitionFilter::Make(input, keys);
  if (!filter.ok()) {
    // Every refusal is InvalidInput, never an internal error.
    if (filter.status().code() != openglue::StatusCode::kInvalidInput) __builtin_trap();
  }

  // Partition values cut from the input ('|'-separated), and a few fixed ones.
  std::vector<std::string> pieces;
  size_t start = 0;
  for (size_t i = 0; i <= input.size() && pieces.size() < keys.size(); ++i) {
    if (i == input.size() || input[i] == '|') {
      pieces.emplace_back(input.substr(start, i - start));
      start = i + 1;
    }
  }
  static const char* const kFixed[] = {"2024", "02", "us", "2024-02-29", "2024-02-29 10:00:00.5",
                                       "1.50", "abc", "-9223372036854775808", "true", "3e14",
                                       "__HIVE_DEFAULT_PARTITION__", "2022-02-01"};
  std::vector<std::string> from_input(keys.size()), fixed(keys.size());
  for (size_t k = 0; k < keys.size(); ++k) {
    from_input[k] = k < pieces.size() ? pieces[k] : std::string(kFixed[k]);
    fixed[k] = kFixed[k];
  }
  for (size_t k = 0; k < keys.size(); ++k) {
    (void)CanonicalPartitionValue(keys[k].type, from_input[k]);
    (void)CanonicalPartitionValue(keys[k].type, input);
  }

  if (filter.ok()) {
    const PartitionFilter& f = **filter;
    (void)f.RequiredEqualities();
    for (const auto* values : {&from_input, &fixed}) {
      std::vector<std::string_view> views(values->begin(), values->end());
      (void)f.Matches(views);
    }
    (void)f.Matches({});  // the wrong number of values matches nothing
  }
  return 0;
}
