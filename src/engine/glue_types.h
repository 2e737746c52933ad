// Glue's data model on Arrow types: type names, the widening/choice lattice that schema-on-read
// inference walks, and the classification of text values (CSV cells).
//
// A choice (a field whose records disagree) is a dense_union whose children are named by their
// Glue type name, in order of first appearance (CONTRACT.md). Numbers widen instead of forming a
// choice: int + long -> long, int/long + double -> double. Structs merge field by field, arrays
// merge their element types. All functions are pure and thread-safe.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

#include <arrow/type_fwd.h>

namespace openglue::engine {

// Glue's name for an Arrow type: "int", "long", "string", "struct", "array", "choice" (a
// dense union), ... ; unknown types get Arrow's own name.
std::string GlueTypeName(const arrow::DataType& type);

// The type that holds values of both `a` and `b`: null + x = x, numeric widening, struct fields
// merged (union of names, first appearance order), list elements merged, otherwise a choice.
std::shared_ptr<arrow::DataType> MergeTypes(const std::shared_ptr<arrow::DataType>& a,
                                            const std::shared_ptr<arrow::DataType>& b);

// Schemas merged field by field with MergeTypes; a field missing on one side stays (nullable).
std::shared_ptr<arrow::Schema> MergeSchemas(const std::shared_ptr<arrow::Schema>& a,
                                            const std::shared_ptr<arrow::Schema>& b);

// Which member of a choice a type belongs to: all numbers share one slot, every other Glue type
// name has its own ("string", "struct", ...).
std::string ChoiceSlot(const arrow::DataType& type);

// A dense union of `members`, children named by Glue type name; one member is returned as is.
std::shared_ptr<arrow::DataType> MakeChoice(const arrow::FieldVector& members);

// The kind of one CSV cell. Ordered: a column's kind is the max over its values, except that
// a number and a string make a choice (tracked separately by TextColumnStats).
enum class TextKind : uint8_t { kNull = 0, kInt = 1, kLong = 2, kDouble = 3, kString = 4 };

// "123", "-5" -> kInt/kLong (by range); "1.5", "-2e10", ".5" -> kDouble; "" -> kNull; anything
// else (including "+1", " 1", "inf", "nan", "0x10") -> kString.
TextKind ClassifyText(std::string_view text);

// Strict parses matching ClassifyText (false when the text is not of that kind).
bool ParseInt64Text(std::string_view text, int64_t* out);
bool ParseDoubleText(std::string_view text, double* out);

// What a pass over a string column saw: the widest number, and whether any non-number appeared.
struct TextColumnStats {
  TextKind numeric = TextKind::kNull;  // kNull, kInt, kLong or kDouble
  bool has_string = false;
  bool string_first = false;  // a string came before any number (choice member order)

  void Merge(const TextColumnStats& later);
  // Glue type: null, int, long, double, string or choice(<numeric>, string).
  std::shared_ptr<arrow::DataType> ToType() const;
};

// Scans every value of a utf8/large_utf8 array (nulls skipped).
TextColumnStats ClassifyTextArray(const arrow::Array& strings);

}  // namespace openglue::engine
