// Fitting arrays to a merged (wider) Glue type without changing any value: the step that lets
// files or batches with different schemas stream as one. A field missing from the input becomes
// null, an int column in a long field is widened, a value whose type is one member of a choice
// is wrapped into that choice, structs and lists are aligned member by member. Anything else
// (a real conversion) goes through GlueCast. Pure and thread-safe.
#pragma once

#include <memory>

#include <arrow/type_fwd.h>

#include "common/status.h"

namespace openglue::engine {

Result<std::shared_ptr<arrow::Array>> AlignArray(const std::shared_ptr<arrow::Array>& array,
                                                 const std::shared_ptr<arrow::DataType>& type);

// Columns are matched by name; the result has exactly `schema`'s fields.
Result<std::shared_ptr<arrow::RecordBatch>> AlignBatch(
    const std::shared_ptr<arrow::RecordBatch>& batch, const std::shared_ptr<arrow::Schema>& schema);

}  // namespace openglue::engine
