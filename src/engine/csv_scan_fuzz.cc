// Fuzz target: bytes as a CSV file through Scan (inference pass, then the typed stream and a
// conformed stream). Malformed input must end in an error naming the file, never a crash/hang.
#include <arrow/api.h>
#undef RETURN_NOT_OK

#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <string>

#include "engine/scan.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace openglue::engine;
  if (size == 0) return 0;
  static const std::string path = "/tmp/og_csv_scan_fuzz_" + std::to_string(getpid()) + ".csv";
  uint8_t mode = data[0];
  FILE* f = std::fopen(path.c_str(), "wb");
  if (f == nullptr) return 0;
  std::fwrite(data + 1, 1, size - 1, f);
  std::fclose(f);
  Options options;
  options["withHeader"] = (mode & 1) ? "true" : "false";
  options["multiLine"] = (mode & 2) ? "true" : "false";
  if (mode & 4) options["quoteChar"] = "-1";
  if (mode & 8) options["escaper"] = "\\";
  if (mode & 16) options["separator"] = "|";
  if (mode & 32) options["skipFirst"] = "true";
  auto scan = Scan::Make({path}, "csv", options, {});
  if (!scan.ok()) return 0;
  auto schema = (*scan)->Schema();
  if (!schema.ok()) {
    if ((*scan)->Schema().status().message().rfind(path, 0) != 0) __builtin_trap();
    return 0;
  }
  for (bool conform : {false, true}) {
    std::shared_ptr<arrow::Schema> target;
    if (conform) {
      arrow::FieldVector fields;
      for (const auto& field : (*schema)->fields()) fields.push_back(arrow::field(field->name(), arrow::int64()));
      target = arrow::schema(fields);
    }
    auto reader = (*scan)->Stream(target, 3);
    if (!reader.ok()) return 0;
    std::shared_ptr<arrow::RecordBatch> batch;
    while ((*reader)->ReadNext(&batch).ok() && batch != nullptr) {
      if (!batch->ValidateFull().ok()) __builtin_trap();
    }
  }
  return 0;
}
