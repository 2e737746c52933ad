#include "engine/glue_types.h"

#include <charconv>
#include <system_error>
#include <vector>

#include <arrow/array.h>
#include <arrow/type.h>

namespace openglue::engine {

std::string GlueTypeName(const arrow::DataType& type) {
  switch (type.id()) {
    case arrow::Type::NA: return "null";
    case arrow::Type::BOOL: return "boolean";
    case arrow::Type::INT8: return "byte";
    case arrow::Type::INT16: return "short";
    case arrow::Type::INT32: return "int";
    case arrow::Type::INT64: return "long";
    case arrow::Type::UINT8: return "short";
    case arrow::Type::UINT16: return "int";
    case arrow::Type::UINT32: return "long";
    case arrow::Type::UINT64: return "decimal";
    case arrow::Type::HALF_FLOAT:
    case arrow::Type::FLOAT: return "float";
    case arrow::Type::DOUBLE: return "double";
    case arrow::Type::DECIMAL32:
    case arrow::Type::DECIMAL64:
    case arrow::Type::DECIMAL128:
    case arrow::Type::DECIMAL256: return "decimal";
    case arrow::Type::STRING:
    case arrow::Type::LARGE_STRING:
    case arrow::Type::STRING_VIEW: return "string";
    case arrow::Type::BINARY:
    case arrow::Type::LARGE_BINARY:
    case arrow::Type::BINARY_VIEW:
    case arrow::Type::FIXED_SIZE_BINARY: return "binary";
    case arrow::Type::DATE32:
    case arrow::Type::DATE64: return "date";
    case arrow::Type::TIMESTAMP: return "timestamp";
    case arrow::Type::LIST:
    case arrow::Type::LARGE_LIST:
    case arrow::Type::FIXED_SIZE_LIST:
    case arrow::Type::LIST_VIEW:
    case arrow::Type::LARGE_LIST_VIEW: return "array";
    case arrow::Type::STRUCT: return "struct";
    case arrow::Type::MAP: return "map";
    case arrow::Type::DENSE_UNION:
    case arrow::Type::SPARSE_UNION: return "choice";
    default: return type.ToString();
  }
}

namespace {

// Rank of a numeric type on the widening ladder; 0 = not numeric.
int NumericRank(const arrow::DataType& type) {
  switch (type.id()) {
    case arrow::Type::INT8: return 1;
    case arrow::Type::UINT8:
    case arrow::Type::INT16: return 2;
    case arrow::Type::UINT16:
    case arrow::Type::INT32: return 3;
    case arrow::Type::UINT32:
    case arrow::Type::INT64: return 4;
    case arrow::Type::HALF_FLOAT:
    case arrow::Type::FLOAT: return 5;
    case arrow::Type::UINT64:
    case arrow::Type::DOUBLE: return 6;
    case arrow::Type::DECIMAL32:
    case arrow::Type::DECIMAL64:
    case arrow::Type::DECIMAL128:
    case arrow::Type::DECIMAL256: return 7;
    default: return 0;
  }
}

bool IsList(const arrow::DataType& type) {
  return type.id() == arrow::Type::LIST || type.id() == arrow::Type::LARGE_LIST;
}

std::shared_ptr<arrow::DataType> WidenNumeric(const std::shared_ptr<arrow::DataType>& a,
                                              const std::shared_ptr<arrow::DataType>& b) {
  int ra = NumericRank(*a), rb = NumericRank(*b);
  if (ra == 7 && rb == 7) {
    const auto& da = static_cast<const arrow::DecimalType&>(*a);
    const auto& db = static_cast<const arrow::DecimalType&>(*b);
    int32_t scale = std::max(da.scale(), db.scale());
    int32_t digits = std::max(da.precision() - da.scale(), db.precision() - db.scale());
    int32_t precision = std::min(38, digits + scale);
    return arrow::decimal128(precision, scale);
  }
  if (ra == 7 || rb == 7) {
    // decimal with an integer keeps the decimal (Spark widens it the same way); with a
    // floating number it becomes double.
    int other = ra == 7 ? rb : ra;
    if (other <= 4) return ra == 7 ? a : b;
    return arrow::float64();
  }
  if (ra == 6 || rb == 6) return arrow::float64();
  if (ra == 5 || rb == 5) {
    // float with long would lose digits: double.
    return (ra == 4 || rb == 4) ? arrow::float64() : arrow::float32();
  }
  switch (std::max(ra, rb)) {
    case 1: return arrow::int8();
    case 2: return arrow::int16();
    case 3: return arrow::int32();
    default: return arrow::int64();
  }
}

std::string SlotOf(const arrow::DataType& type) {
  if (NumericRank(type) != 0) return "#numeric";
  return GlueTypeName(type);
}

arrow::FieldVector Members(const std::shared_ptr<arrow::DataType>& type) {
  if (type->id() == arrow::Type::DENSE_UNION || type->id() == arrow::Type::SPARSE_UNION) {
    return type->fields();
  }
  return {arrow::field(GlueTypeName(*type), type)};
}

}  // namespace

std::string ChoiceSlot(const arrow::DataType& type) { return SlotOf(type); }

std::shared_ptr<arrow::DataType> MakeChoice(const arrow::FieldVector& members) {
  if (members.size() == 1) return members[0]->type();
  arrow::FieldVector fields;
  std::vector<int8_t> codes;
  for (size_t i = 0; i < members.size(); ++i) {
    fields.push_back(arrow::field(GlueTypeName(*members[i]->type()), members[i]->type()));
    codes.push_back(static_cast<int8_t>(i));
  }
  return arrow::dense_union(std::move(fields), std::move(codes));
}

std::shared_ptr<arrow::DataType> MergeTypes(const std::shared_ptr<arrow::DataType>& a,
                                            const std::shared_ptr<arrow::DataType>& b) {
  if (a == nullptr || a->id() == arrow::Type::NA) return b;
  if (b == nullptr || b->id() == arrow::Type::NA) return a;
  if (a->Equals(*b)) return a;
  bool a_union = a->id() == arrow::Type::DENSE_UNION || a->id() == arrow::Type::SPARSE_UNION;
  bool b_union = b->id() == arrow::Type::DENSE_UNION || b->id() == arrow::Type::SPARSE_UNION;
  if (!a_union && !b_union) {
    if (NumericRank(*a) != 0 && NumericRank(*b) != 0) return WidenNumeric(a, b);
    if (a->id() == arrow::Type::STRUCT && b->id() == arrow::Type::STRUCT) {
      auto merged = MergeSchemas(arrow::schema(a->fields()), arrow::schema(b->fields()));
      return arrow::struct_(merged->fields());
    }
    if (IsList(*a) && IsList(*b)) {
      return arrow::list(MergeTypes(a->field(0)->type(), b->field(0)->type()));
    }
    if (SlotOf(*a) == SlotOf(*b)) {
      // Same Glue name, different parameters (timestamp units, string/large_string): the
      // first one seen wins; values are cast to it.
      return a;
    }
  }
  arrow::FieldVector members = Members(a);
  for (const auto& extra : Members(b)) {
    bool placed = false;
    for (auto& member : members) {
      if (SlotOf(*member->type()) == SlotOf(*extra->type())) {
        member = arrow::field(member->name(), MergeTypes(member->type(), extra->type()));
        placed = true;
        break;
      }
    }
    if (!placed) members.push_back(extra);
  }
  return MakeChoice(members);
}

std::shared_ptr<arrow::Schema> MergeSchemas(const std::shared_ptr<arrow::Schema>& a,
                                            const std::shared_ptr<arrow::Schema>& b) {
  if (a == nullptr) return b;
  if (b == nullptr) return a;
  arrow::FieldVector fields = a->fields();
  for (const auto& field : b->fields()) {
    bool found = false;
    for (auto& existing : fields) {
      if (existing->name() == field->name()) {
        existing = arrow::field(existing->name(), MergeTypes(existing->type(), field->type()));
        found = true;
        break;
      }
    }
    if (!found) fields.push_back(field->WithNullable(true));
  }
  return arrow::schema(std::move(fields));
}

// ---- text classification -------------------------------------------------------------------

namespace {

inline bool IsDigit(char c) { return static_cast<unsigned char>(c - '0') < 10; }

}  // namespace

TextKind ClassifyText(std::string_view text) {
  size_t n = text.size();
  if (n == 0) return TextKind::kNull;
  const char* s = text.data();
  size_t i = s[0] == '-' ? 1 : 0;
  if (i == n) return TextKind::kString;
  size_t digits_start = i;
  while (i < n && IsDigit(s[i])) ++i;
  size_t digits = i - digits_start;
  if (i == n) {
    if (digits <= 9) return TextKind::kInt;
    if (digits <= 18) {
      int64_t v = 0;
      for (size_t k = digits_start; k < n; ++k) v = v * 10 + (s[k] - '0');
      if (s[0] == '-') v = -v;
      return (v >= INT32_MIN && v <= INT32_MAX) ? TextKind::kInt : TextKind::kLong;
    }
    int64_t v;
    if (ParseInt64Text(text, &v)) return TextKind::kLong;
    return TextKind::kDouble;  // an integer too large for long: a double, as Spark infers
  }
  // Not a plain integer: a decimal number, possibly with an exponent.
  char c = s[i];
  if (c != '.' && c != 'e' && c != 'E') return TextKind::kString;
  double d;
  return ParseDoubleText(text, &d) ? TextKind::kDouble : TextKind::kString;
}

bool ParseInt64Text(std::string_view text, int64_t* out) {
  if (text.empty()) return false;
  auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), *out);
  return ec == std::errc() && ptr == text.data() + text.size();
}

bool ParseDoubleText(std::string_view text, double* out) {
  size_t n = text.size();
  if (n == 0) return false;
  const char* s = text.data();
  // from_chars also takes "inf", "nan" and hex-like forms; only plain decimal numbers count.
  size_t i = s[0] == '-' ? 1 : 0;
  if (i == n || !(IsDigit(s[i]) || (s[i] == '.' && i + 1 < n && IsDigit(s[i + 1])))) return false;
  for (size_t k = i; k < n; ++k) {
    char c = s[k];
    if (!(IsDigit(c) || c == '.' || c == 'e' || c == 'E' || c == '-' || c == '+')) return false;
  }
  auto [ptr, ec] = std::from_chars(s, s + n, *out, std::chars_format::general);
  return ec == std::errc() && ptr == s + n;
}

void TextColumnStats::Merge(const TextColumnStats& later) {
  // `later` covers rows after ours: its first value is the column's first only if we saw none.
  if (numeric == TextKind::kNull && !has_string) string_first = later.string_first;
  has_string = has_string || later.has_string;
  numeric = std::max(numeric, later.numeric);
}

std::shared_ptr<arrow::DataType> TextColumnStats::ToType() const {
  std::shared_ptr<arrow::DataType> number;
  switch (numeric) {
    case TextKind::kInt: number = arrow::int32(); break;
    case TextKind::kLong: number = arrow::int64(); break;
    case TextKind::kDouble: number = arrow::float64(); break;
    default: break;
  }
  if (!has_string) return number ? number : arrow::null();
  if (!number) return arrow::utf8();
  if (string_first) {
    return MakeChoice({arrow::field("string", arrow::utf8()), arrow::field("n", number)});
  }
  return MakeChoice({arrow::field("n", number), arrow::field("string", arrow::utf8())});
}

TextColumnStats ClassifyTextArray(const arrow::Array& strings) {
  TextColumnStats stats;
  auto visit = [&](auto offsets, const uint8_t* data, int64_t length, const arrow::Array& array) {
    const bool has_nulls = array.null_count() > 0;
    uint8_t numeric = 0;
    for (int64_t i = 0; i < length; ++i) {
      if (has_nulls && array.IsNull(i)) continue;
      auto begin = offsets[i], end = offsets[i + 1];
      std::string_view text(reinterpret_cast<const char*>(data) + begin, end - begin);
      TextKind kind = ClassifyText(text);
      if (kind == TextKind::kString) {
        if (!stats.has_string) {
          stats.has_string = true;
          stats.string_first = numeric == 0;
        }
        // Once a string is seen only the numeric width can still change.
      } else if (static_cast<uint8_t>(kind) > numeric) {
        numeric = static_cast<uint8_t>(kind);
      }
    }
    stats.numeric = static_cast<TextKind>(numeric);
  };
  if (strings.type_id() == arrow::Type::STRING) {
    const auto& a = static_cast<const arrow::StringArray&>(strings);
    visit(a.raw_value_offsets(), a.value_data() ? a.value_data()->data() : nullptr, a.length(), a);
  } else if (strings.type_id() == arrow::Type::LARGE_STRING) {
    const auto& a = static_cast<const arrow::LargeStringArray&>(strings);
    visit(a.raw_value_offsets(), a.value_data() ? a.value_data()->data() : nullptr, a.length(), a);
  }
  return stats;
}

}  // namespace openglue::engine
