// Glue's cast semantics on Arrow arrays (string -> number/date/timestamp/decimal/boolean parse,
// numbers -> string; a value that does not convert becomes null, never an error), and Conform,
// which fits a record batch to a schema (missing fields null, extra fields dropped).
//
// NOTE: this is the engine helper's minimal private version; the writer helper owns the real one
// with the same declarations (CONTRACT.md).
#pragma once

#include <memory>

#include <arrow/type_fwd.h>

#include "common/status.h"

namespace openglue::engine {

Result<std::shared_ptr<arrow::Array>> GlueCast(const std::shared_ptr<arrow::Array>& array,
                                               const std::shared_ptr<arrow::DataType>& type);

Result<std::shared_ptr<arrow::RecordBatch>> Conform(const std::shared_ptr<arrow::RecordBatch>& batch,
                                                    const std::shared_ptr<arrow::Schema>& schema);

}  // namespace openglue::engine
