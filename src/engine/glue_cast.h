// Glue's casts on Arrow arrays: what apply_mapping, resolveChoice("cast:<type>") and a read with
// a target schema do to a value of one Glue type when another is wanted.
//
// Semantics (a value that does not convert becomes null; a cast never fails because of data):
// - string -> byte/short/int/long: the trimmed text is a decimal or scientific number ("12",
//   " -3 ", "+7", "1.9" -> 1, "-2.7" -> -2, "1e3" -> 1000), truncated toward zero as Spark does;
//   anything else ("", "x", "NaN") or a value out of the target's range is null.
// - string -> float/double: trimmed decimal or scientific text, "NaN", "Infinity"/"inf" with an
//   optional sign; a double out of float's range is null.
// - string -> decimal(p,s): trimmed decimal text (exponent allowed), rounded half away from
//   zero to s digits; more than p digits is null.
// - string -> boolean: true/false/t/f/yes/no/y/n/1/0, case-insensitive, trimmed.
// - string -> date: yyyy-[m]m-[d]d, optionally followed by ' ' or 'T' and anything (the time
//   part is ignored); an impossible date (2023-02-30) is null.
// - string -> timestamp: yyyy-mm-dd[( |T)hh:mm[:ss[.f{1,9}]]][Z|(+|-)hh[:]mm]; an offset is
//   converted to UTC, the result has no zone; fractions beyond the unit are truncated.
// - numbers, booleans, decimals, dates, timestamps -> string: their text (doubles as Java prints
//   them: "1.0", not "1"; timestamps "yyyy-mm-dd hh:mm:ss[.ffffff]" without trailing zeros);
//   structs, arrays and maps -> their JSON text; binary -> string when it is valid UTF-8.
// - number -> number: integers are range checked (out of range -> null), floating point to
//   integer truncates toward zero (NaN, infinities, out of range -> null), to decimal rounds,
//   decimal to integer truncates. boolean <-> number: true is 1, non-zero is true.
// - date -> timestamp at midnight; timestamp -> date (floor); timestamp -> long: epoch seconds;
//   long -> timestamp: epoch seconds.
// - a choice (dense_union whose members are named by Glue type) is cast member by member and
//   the results merged, so choice(int,string) -> long gives each row its own cast value.
//   A non-union to a union target: the whole array becomes the member of the same type (or the
//   first member, cast).
// - struct -> struct: target fields by name (exact, then case-insensitive), each cast; fields
//   the source lacks are null. list -> list and map -> map: elements cast.
// - any other pair (a struct to an int, ...) gives all nulls.
//
// All functions are pure (arrays in, new arrays out), thread-safe, and never throw. Errors are
// only Internal (out of memory, an Arrow failure not caused by the data).
#pragma once

#include <memory>

#include <arrow/record_batch.h>
#include <arrow/type_fwd.h>

#include "common/status.h"

namespace openglue::engine {

// `array` cast to `target` (see above). Returns `array` itself when the types are equal.
Result<std::shared_ptr<arrow::Array>> GlueCast(const std::shared_ptr<arrow::Array>& array,
                                               const std::shared_ptr<arrow::DataType>& target);

// `batch` shaped as `schema`: the schema's fields in its order, each taken from the batch's field
// of the same name (exact match first, then case-insensitive) and cast; a field the batch lacks
// is all null; batch fields the schema does not name are dropped. Output fields keep the
// schema's names and types (a field declared non-nullable becomes nullable when nulls appear).
Result<std::shared_ptr<arrow::RecordBatch>> Conform(const std::shared_ptr<arrow::RecordBatch>& batch,
                                                    const std::shared_ptr<arrow::Schema>& schema);

// Glue's per-value typing of text (a catalog CSV table's cells): how many values of `strings`
// a cast to `target` loses (non-empty text whose GlueCast is null). 0 for a string target or a
// non-string array.
Result<int64_t> TextCastLosses(const std::shared_ptr<arrow::Array>& strings,
                               const std::shared_ptr<arrow::DataType>& target);

// Text into choice(T, string) (a declared column some of whose values are not T's): each value
// cast to T as GlueCast does, and the values that cast loses kept, as text, in the string
// member. Any other target or array type: GlueCast.
Result<std::shared_ptr<arrow::Array>> CastTextPerValue(const std::shared_ptr<arrow::Array>& strings,
                                                       const std::shared_ptr<arrow::DataType>& target);

// A reader that yields `input`'s batches conformed to `schema`. A cast failure (Internal only)
// surfaces as the reader's error.
std::shared_ptr<arrow::RecordBatchReader> ConformReader(
    std::shared_ptr<arrow::RecordBatchReader> input, std::shared_ptr<arrow::Schema> schema);

// Glue's make_struct for writers: every dense_union, at any depth, becomes a struct with one
// field per member (named as the member), the row's own member set and the others null.
std::shared_ptr<arrow::DataType> UnionsToStructsType(const std::shared_ptr<arrow::DataType>& type);
Result<std::shared_ptr<arrow::Array>> UnionsToStructs(const std::shared_ptr<arrow::Array>& array);
bool HasUnion(const std::shared_ptr<arrow::DataType>& type);

// The value at `index` of `array` as JSON text appended to `out` (null -> `null`; structs as
// objects, lists as arrays, maps as objects with stringified keys, binary as base64 text, dates
// and timestamps as their string form, non-finite floats as null). Used by the JSON writer and
// the casts of nested values to string.
void AppendJsonValue(const arrow::Array& array, int64_t index, std::string* out);

}  // namespace openglue::engine
