#include "engine/glue_cast.h"

#include <charconv>
#include <cmath>
#include <cstring>
#include <limits>
#include <string_view>
#include <type_traits>
#include <vector>

#include <arrow/api.h>
#include <arrow/array/concatenate.h>
#include <arrow/compute/api_vector.h>
#include <arrow/compute/cast.h>
#include <arrow/util/base64.h>
#include <arrow/util/bitmap_ops.h>
#include <arrow/util/decimal.h>
#include <arrow/util/float16.h>

#include "common/strings.h"

namespace openglue::engine {
namespace {

using ArrayPtr = std::shared_ptr<arrow::Array>;
using TypePtr = std::shared_ptr<arrow::DataType>;

Status FromArrow(const arrow::Status& status, const char* what) {
  if (status.ok()) return Status::OK();
  return Status::Internal(std::string(what) + ": " + status.ToString());
}

#define OG_ARROW_RETURN(expr, what) OG_RETURN_NOT_OK(FromArrow((expr), what))
#define OG_ARROW_ASSIGN(lhs, rexpr, what)                          \
  auto OG_CONCAT(_og_ar_, __LINE__) = (rexpr);                     \
  OG_ARROW_RETURN(OG_CONCAT(_og_ar_, __LINE__).status(), what);    \
  lhs = std::move(OG_CONCAT(_og_ar_, __LINE__)).ValueUnsafe()

template <typename T, typename... Args>
ArrayPtr MakeArr(Args&&... args) {
  return std::make_shared<T>(std::forward<Args>(args)...);
}

Result<ArrayPtr> Nulls(const TypePtr& type, int64_t length) {
  OG_ARROW_ASSIGN(ArrayPtr out, arrow::MakeArrayOfNull(type, length), "null array");
  return out;
}

bool IsStringLike(arrow::Type::type id) {
  return id == arrow::Type::STRING || id == arrow::Type::LARGE_STRING ||
         id == arrow::Type::STRING_VIEW;
}
bool IsBinaryLike(arrow::Type::type id) {
  return id == arrow::Type::BINARY || id == arrow::Type::LARGE_BINARY ||
         id == arrow::Type::BINARY_VIEW || id == arrow::Type::FIXED_SIZE_BINARY;
}
bool IsIntegerId(arrow::Type::type id) { return arrow::is_integer(id); }
bool IsFloatId(arrow::Type::type id) { return arrow::is_floating(id); }
bool IsUnionId(arrow::Type::type id) {
  return id == arrow::Type::DENSE_UNION || id == arrow::Type::SPARSE_UNION;
}
bool IsListId(arrow::Type::type id) {
  return id == arrow::Type::LIST || id == arrow::Type::LARGE_LIST ||
         id == arrow::Type::FIXED_SIZE_LIST || id == arrow::Type::LIST_VIEW ||
         id == arrow::Type::LARGE_LIST_VIEW;
}

std::string_view Trim(std::string_view s) {
  auto space = [](char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v'; };
  while (!s.empty() && space(s.front())) s.remove_prefix(1);
  while (!s.empty() && space(s.back())) s.remove_suffix(1);
  return s;
}

// Calls fn(i, string_view) for each valid value of a string or binary array, fn_null(i) else.
template <typename Fn>
void ForEachView(const arrow::Array& array, Fn&& fn) {
  const int64_t n = array.length();
  auto visit = [&](const auto& typed) {
    for (int64_t i = 0; i < n; ++i) fn(i, typed.IsNull(i), typed.IsNull(i) ? std::string_view() : std::string_view(typed.GetView(i)));
  };
  switch (array.type_id()) {
    case arrow::Type::STRING: visit(static_cast<const arrow::StringArray&>(array)); break;
    case arrow::Type::LARGE_STRING: visit(static_cast<const arrow::LargeStringArray&>(array)); break;
    case arrow::Type::STRING_VIEW: visit(static_cast<const arrow::StringViewArray&>(array)); break;
    case arrow::Type::BINARY: visit(static_cast<const arrow::BinaryArray&>(array)); break;
    case arrow::Type::LARGE_BINARY: visit(static_cast<const arrow::LargeBinaryArray&>(array)); break;
    case arrow::Type::BINARY_VIEW: visit(static_cast<const arrow::BinaryViewArray&>(array)); break;
    case arrow::Type::FIXED_SIZE_BINARY: visit(static_cast<const arrow::FixedSizeBinaryArray&>(array)); break;
    default: for (int64_t i = 0; i < n; ++i) fn(i, true, std::string_view()); break;
  }
}

// Builds a primitive array of C type T from a per-row producer returning optional<T>.
template <typename ArrowType, typename Producer>
Result<ArrayPtr> BuildPrimitive(const TypePtr& type, int64_t n, Producer&& produce) {
  using T = typename ArrowType::c_type;
  std::unique_ptr<arrow::ArrayBuilder> raw;
  OG_ARROW_RETURN(arrow::MakeBuilder(arrow::default_memory_pool(), type, &raw), "builder");
  auto* builder = static_cast<typename arrow::TypeTraits<ArrowType>::BuilderType*>(raw.get());
  OG_ARROW_RETURN(builder->Reserve(n), "reserve");
  for (int64_t i = 0; i < n; ++i) {
    T value{};
    if (produce(i, &value)) builder->UnsafeAppend(value);
    else builder->UnsafeAppendNull();
  }
  ArrayPtr out;
  OG_ARROW_RETURN(builder->Finish(&out), "finish");
  return out;
}

// ---- text parsing ---------------------------------------------------------------------------

bool ParseInt64(std::string_view s, int64_t* out) {
  s = Trim(s);
  if (s.empty()) return false;
  bool negative = false;
  if (s[0] == '+' || s[0] == '-') {
    negative = s[0] == '-';
    s.remove_prefix(1);
    if (s.empty()) return false;
  }
  // Accumulate negatively so INT64_MIN parses.
  int64_t value = 0;
  for (char c : s) {
    if (c < '0' || c > '9') return false;
    if (__builtin_mul_overflow(value, 10, &value)) return false;
    if (__builtin_sub_overflow(value, c - '0', &value)) return false;
  }
  if (!negative) {
    if (value == std::numeric_limits<int64_t>::min()) return false;
    value = -value;
  }
  *out = value;
  return true;
}

// Decimal or scientific text ("1.5", "-2.7e1", ".5") truncated toward zero, as Spark casts a
// string to an integer; false for other text or beyond 64 bits.
bool ParseIntegralPart(std::string_view s, int64_t* out) {
  s = Trim(s);
  if (!s.empty() && s[0] == '+') s.remove_prefix(1);
  if (s.empty() || s.size() > 100) return false;
  for (char c : s)
    if (!((c >= '0' && c <= '9') || c == '.' || c == 'e' || c == 'E' || c == '+' || c == '-')) return false;
  arrow::Decimal128 value;
  int32_t precision = 0, scale = 0;
  if (!arrow::Decimal128::FromString(s, &value, &precision, &scale).ok()) return false;
  if (scale > 0) {
    value = value.ReduceScaleBy(scale, /*round=*/false);
  } else if (scale < 0) {
    if (precision - scale > 38) return false;
    value = value.IncreaseScaleBy(-scale);
  }
  if (value < arrow::Decimal128(std::numeric_limits<int64_t>::min()) ||
      value > arrow::Decimal128(std::numeric_limits<int64_t>::max()))
    return false;
  *out = static_cast<int64_t>(value.low_bits());
  return true;
}

bool EqualsIgnoreCase(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i)
    if (std::tolower(static_cast<unsigned char>(a[i])) != std::tolower(static_cast<unsigned char>(b[i]))) return false;
  return true;
}

bool ParseDouble(std::string_view s, double* out) {
  s = Trim(s);
  if (s.empty()) return false;
  bool negative = false;
  std::string_view body = s;
  if (body[0] == '+' || body[0] == '-') {
    negative = body[0] == '-';
    body.remove_prefix(1);
  }
  if (EqualsIgnoreCase(body, "nan")) { *out = std::numeric_limits<double>::quiet_NaN(); return true; }
  if (EqualsIgnoreCase(body, "infinity") || EqualsIgnoreCase(body, "inf")) {
    *out = negative ? -std::numeric_limits<double>::infinity() : std::numeric_limits<double>::infinity();
    return true;
  }
  if (body.empty() || body[0] == '+' || body[0] == '-') return false;
  // Only decimal/scientific text: from_chars would also take "infinity" forms handled above.
  for (char c : body)
    if (!((c >= '0' && c <= '9') || c == '.' || c == 'e' || c == 'E' || c == '+' || c == '-')) return false;
  double value = 0;
  auto [ptr, ec] = std::from_chars(body.data(), body.data() + body.size(), value);
  if (ptr != body.data() + body.size()) return false;
  if (ec == std::errc::result_out_of_range) {
    // Underflow gives 0 (as Java does); overflow is infinite. from_chars leaves `value` alone:
    // the exponent's sign tells which.
    size_t e = body.find_first_of("eE");
    bool tiny = e != std::string_view::npos && e + 1 < body.size() && body[e + 1] == '-';
    value = tiny ? 0.0 : std::numeric_limits<double>::infinity();
  } else if (ec != std::errc()) {
    return false;
  }
  *out = negative ? -value : value;
  return true;
}

bool ParseBool(std::string_view s, bool* out) {
  s = Trim(s);
  for (const char* t : {"true", "t", "yes", "y", "1"})
    if (EqualsIgnoreCase(s, t)) { *out = true; return true; }
  for (const char* f : {"false", "f", "no", "n", "0"})
    if (EqualsIgnoreCase(s, f)) { *out = false; return true; }
  return false;
}

// Days since 1970-01-01 of a proleptic Gregorian date (Howard Hinnant's algorithm).
int64_t DaysFromCivil(int64_t y, unsigned m, unsigned d) {
  y -= m <= 2;
  const int64_t era = (y >= 0 ? y : y - 399) / 400;
  const unsigned yoe = static_cast<unsigned>(y - era * 400);
  const unsigned doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
  const unsigned doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
  return era * 146097 + static_cast<int64_t>(doe) - 719468;
}

void CivilFromDays(int64_t z, int64_t* y, unsigned* m, unsigned* d) {
  z += 719468;
  const int64_t era = (z >= 0 ? z : z - 146096) / 146097;
  const unsigned doe = static_cast<unsigned>(z - era * 146097);
  const unsigned yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
  const int64_t yy = static_cast<int64_t>(yoe) + era * 400;
  const unsigned doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
  const unsigned mp = (5 * doy + 2) / 153;
  *d = doy - (153 * mp + 2) / 5 + 1;
  *m = mp < 10 ? mp + 3 : mp - 9;
  *y = yy + (*m <= 2);
}

bool IsLeap(int64_t y) { return (y % 4 == 0 && y % 100 != 0) || y % 400 == 0; }
unsigned DaysInMonth(int64_t y, unsigned m) {
  static const unsigned kDays[] = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
  return m == 2 && IsLeap(y) ? 29 : kDays[m - 1];
}

// Reads 1..max_digits digits at s[*pos].
bool Digits(std::string_view s, size_t* pos, size_t min_digits, size_t max_digits, int64_t* out) {
  size_t start = *pos;
  int64_t value = 0;
  while (*pos < s.size() && *pos - start < max_digits && s[*pos] >= '0' && s[*pos] <= '9') {
    value = value * 10 + (s[*pos] - '0');
    ++*pos;
  }
  if (*pos - start < min_digits) return false;
  *out = value;
  return true;
}

// yyyy-m-d at the start of s; *pos after it. The day count in *days.
bool ParseDatePart(std::string_view s, size_t* pos, int64_t* days) {
  int64_t y, m, d;
  bool negative = false;
  if (*pos < s.size() && (s[*pos] == '-' || s[*pos] == '+')) { negative = s[*pos] == '-'; ++*pos; }
  if (!Digits(s, pos, 4, 6, &y)) return false;
  if (negative) y = -y;
  if (*pos >= s.size() || s[*pos] != '-') return false;
  ++*pos;
  if (!Digits(s, pos, 1, 2, &m) || m < 1 || m > 12) return false;
  if (*pos >= s.size() || s[*pos] != '-') return false;
  ++*pos;
  if (!Digits(s, pos, 1, 2, &d) || d < 1 || d > DaysInMonth(y, static_cast<unsigned>(m))) return false;
  *days = DaysFromCivil(y, static_cast<unsigned>(m), static_cast<unsigned>(d));
  return true;
}

bool ParseDate(std::string_view s, int32_t* out) {
  s = Trim(s);
  size_t pos = 0;
  int64_t days;
  if (!ParseDatePart(s, &pos, &days)) return false;
  if (pos != s.size() && s[pos] != ' ' && s[pos] != 'T') return false;
  if (days < std::numeric_limits<int32_t>::min() || days > std::numeric_limits<int32_t>::max()) return false;
  *out = static_cast<int32_t>(days);
  return true;
}

// Parses into nanoseconds-free parts: seconds since epoch and nanoseconds of the second.
bool ParseTimestamp(std::string_view s, int64_t* seconds, int64_t* nanos) {
  s = Trim(s);
  size_t pos = 0;
  int64_t days;
  if (!ParseDatePart(s, &pos, &days)) return false;
  int64_t hh = 0, mm = 0, ss = 0, frac = 0;
  if (pos < s.size()) {
    if (s[pos] != ' ' && s[pos] != 'T') return false;
    ++pos;
    if (!Digits(s, &pos, 1, 2, &hh) || hh > 23) return false;
    if (pos >= s.size() || s[pos] != ':') return false;
    ++pos;
    if (!Digits(s, &pos, 1, 2, &mm) || mm > 59) return false;
    if (pos < s.size() && s[pos] == ':') {
      ++pos;
      if (!Digits(s, &pos, 1, 2, &ss) || ss > 59) return false;
      if (pos < s.size() && s[pos] == '.') {
        ++pos;
        size_t start = pos;
        int64_t digits;
        if (!Digits(s, &pos, 1, 9, &digits)) return false;
        frac = digits;
        for (size_t k = pos - start; k < 9; ++k) frac *= 10;
        while (pos < s.size() && s[pos] >= '0' && s[pos] <= '9') ++pos;  // beyond ns: dropped
      }
    }
    int64_t offset = 0;
    if (pos < s.size()) {
      if (s[pos] == 'Z' || s[pos] == 'z') {
        ++pos;
      } else if (s[pos] == '+' || s[pos] == '-') {
        int sign = s[pos] == '-' ? -1 : 1;
        ++pos;
        int64_t oh, om = 0;
        if (!Digits(s, &pos, 2, 2, &oh) || oh > 18) return false;
        if (pos < s.size() && s[pos] == ':') ++pos;
        if (pos < s.size() && !Digits(s, &pos, 2, 2, &om)) return false;
        if (om > 59) return false;
        offset = sign * (oh * 3600 + om * 60);
      }
      if (pos != s.size()) return false;
    }
    *seconds = days * 86400 + hh * 3600 + mm * 60 + ss - offset;
  } else {
    *seconds = days * 86400;
  }
  *nanos = frac;
  return true;
}

int64_t UnitsPerSecond(arrow::TimeUnit::type unit) {
  switch (unit) {
    case arrow::TimeUnit::SECOND: return 1;
    case arrow::TimeUnit::MILLI: return 1000;
    case arrow::TimeUnit::MICRO: return 1000000;
    case arrow::TimeUnit::NANO: return 1000000000;
  }
  return 1;
}

int64_t FloorDiv(int64_t a, int64_t b) {
  int64_t q = a / b;
  if ((a % b != 0) && ((a < 0) != (b < 0))) --q;
  return q;
}

// ---- text formatting ------------------------------------------------------------------------

void AppendTwo(std::string* out, unsigned v) {
  out->push_back(static_cast<char>('0' + v / 10));
  out->push_back(static_cast<char>('0' + v % 10));
}

void AppendDate(int64_t days, std::string* out) {
  int64_t y;
  unsigned m, d;
  CivilFromDays(days, &y, &m, &d);
  char buffer[32];
  int n = y >= 0 && y <= 9999 ? std::snprintf(buffer, sizeof buffer, "%04lld", static_cast<long long>(y))
                              : std::snprintf(buffer, sizeof buffer, "%lld", static_cast<long long>(y));
  out->append(buffer, static_cast<size_t>(n));
  out->push_back('-');
  AppendTwo(out, m);
  out->push_back('-');
  AppendTwo(out, d);
}

void AppendTimestamp(int64_t value, arrow::TimeUnit::type unit, std::string* out) {
  const int64_t per_second = UnitsPerSecond(unit);
  int64_t seconds = FloorDiv(value, per_second);
  int64_t sub = value - seconds * per_second;
  int64_t days = FloorDiv(seconds, 86400);
  int64_t in_day = seconds - days * 86400;
  AppendDate(days, out);
  out->push_back(' ');
  AppendTwo(out, static_cast<unsigned>(in_day / 3600));
  out->push_back(':');
  AppendTwo(out, static_cast<unsigned>(in_day / 60 % 60));
  out->push_back(':');
  AppendTwo(out, static_cast<unsigned>(in_day % 60));
  if (sub != 0) {
    int width = unit == arrow::TimeUnit::MILLI ? 3 : unit == arrow::TimeUnit::MICRO ? 6 : 9;
    char buffer[16];
    std::snprintf(buffer, sizeof buffer, ".%0*lld", width, static_cast<long long>(sub));
    std::string frac(buffer);
    while (frac.back() == '0') frac.pop_back();
    out->append(frac);
  }
}

void AppendDouble(double v, std::string* out) {
  if (std::isnan(v)) { out->append("NaN"); return; }
  if (std::isinf(v)) { out->append(v > 0 ? "Infinity" : "-Infinity"); return; }
  char buffer[64];
  auto [ptr, ec] = std::to_chars(buffer, buffer + sizeof buffer, v);
  std::string_view text(buffer, static_cast<size_t>(ptr - buffer));
  out->append(text);
  if (text.find_first_of(".eE") == std::string_view::npos) out->append(".0");
}

void AppendFloat(float v, std::string* out) {
  if (std::isnan(v) || std::isinf(v)) { AppendDouble(v, out); return; }
  char buffer[64];
  auto [ptr, ec] = std::to_chars(buffer, buffer + sizeof buffer, v);
  std::string_view text(buffer, static_cast<size_t>(ptr - buffer));
  out->append(text);
  if (text.find_first_of(".eE") == std::string_view::npos) out->append(".0");
}

void AppendJsonString(std::string_view s, std::string* out) {
  out->push_back('"');
  for (unsigned char c : s) {
    switch (c) {
      case '"': out->append("\\\""); break;
      case '\\': out->append("\\\\"); break;
      case '\n': out->append("\\n"); break;
      case '\r': out->append("\\r"); break;
      case '\t': out->append("\\t"); break;
      case '\b': out->append("\\b"); break;
      case '\f': out->append("\\f"); break;
      default:
        if (c < 0x20) {
          char buffer[8];
          std::snprintf(buffer, sizeof buffer, "\\u%04x", c);
          out->append(buffer);
        } else {
          out->push_back(static_cast<char>(c));
        }
    }
  }
  out->push_back('"');
}

// The scalar's Glue text (no quoting); false for types with no scalar text.
bool AppendScalarText(const arrow::Array& array, int64_t i, std::string* out) {
  using arrow::Type;
  switch (array.type_id()) {
    case Type::BOOL: out->append(static_cast<const arrow::BooleanArray&>(array).Value(i) ? "true" : "false"); return true;
#define OG_INT_CASE(ID, ARR) \
    case Type::ID: out->append(std::to_string(static_cast<const arrow::ARR&>(array).Value(i))); return true;
    OG_INT_CASE(INT8, Int8Array) OG_INT_CASE(INT16, Int16Array) OG_INT_CASE(INT32, Int32Array)
    OG_INT_CASE(INT64, Int64Array) OG_INT_CASE(UINT8, UInt8Array) OG_INT_CASE(UINT16, UInt16Array)
    OG_INT_CASE(UINT32, UInt32Array) OG_INT_CASE(UINT64, UInt64Array)
#undef OG_INT_CASE
    case Type::HALF_FLOAT: AppendFloat(arrow::util::Float16::FromBits(static_cast<const arrow::HalfFloatArray&>(array).Value(i)).ToFloat(), out); return true;
    case Type::FLOAT: AppendFloat(static_cast<const arrow::FloatArray&>(array).Value(i), out); return true;
    case Type::DOUBLE: AppendDouble(static_cast<const arrow::DoubleArray&>(array).Value(i), out); return true;
    case Type::DECIMAL128: out->append(static_cast<const arrow::Decimal128Array&>(array).FormatValue(i)); return true;
    case Type::DECIMAL256: out->append(static_cast<const arrow::Decimal256Array&>(array).FormatValue(i)); return true;
    case Type::DATE32: AppendDate(static_cast<const arrow::Date32Array&>(array).Value(i), out); return true;
    case Type::DATE64: AppendDate(FloorDiv(static_cast<const arrow::Date64Array&>(array).Value(i), 86400000), out); return true;
    case Type::TIMESTAMP: {
      const auto& type = static_cast<const arrow::TimestampType&>(*array.type());
      AppendTimestamp(static_cast<const arrow::TimestampArray&>(array).Value(i), type.unit(), out);
      return true;
    }
    case Type::STRING: out->append(static_cast<const arrow::StringArray&>(array).GetView(i)); return true;
    case Type::LARGE_STRING: out->append(static_cast<const arrow::LargeStringArray&>(array).GetView(i)); return true;
    case Type::STRING_VIEW: out->append(static_cast<const arrow::StringViewArray&>(array).GetView(i)); return true;
    default: return false;
  }
}

}  // namespace

void AppendJsonValue(const arrow::Array& array, int64_t i, std::string* out) {
  using arrow::Type;
  if (array.IsNull(i)) { out->append("null"); return; }
  switch (array.type_id()) {
    case Type::NA: out->append("null"); return;
    case Type::BOOL:
    case Type::INT8: case Type::INT16: case Type::INT32: case Type::INT64:
    case Type::UINT8: case Type::UINT16: case Type::UINT32: case Type::UINT64:
      AppendScalarText(array, i, out);
      return;
    case Type::HALF_FLOAT: case Type::FLOAT: case Type::DOUBLE: {
      double v = array.type_id() == Type::DOUBLE ? static_cast<const arrow::DoubleArray&>(array).Value(i)
                 : array.type_id() == Type::FLOAT ? static_cast<const arrow::FloatArray&>(array).Value(i)
                 : arrow::util::Float16::FromBits(static_cast<const arrow::HalfFloatArray&>(array).Value(i)).ToFloat();
      if (!std::isfinite(v)) { out->append("null"); return; }
      AppendScalarText(array, i, out);
      return;
    }
    case Type::DECIMAL128: case Type::DECIMAL256:
      AppendScalarText(array, i, out);  // a JSON number, exact
      return;
    case Type::BINARY: case Type::LARGE_BINARY: case Type::BINARY_VIEW: case Type::FIXED_SIZE_BINARY: {
      std::string_view view;
      ForEachView(*array.Slice(i, 1), [&](int64_t, bool, std::string_view v) { view = v; });
      AppendJsonString(arrow::util::base64_encode(view), out);
      return;
    }
    case Type::STRUCT: {
      const auto& s = static_cast<const arrow::StructArray&>(array);
      out->push_back('{');
      for (int f = 0; f < s.num_fields(); ++f) {
        if (f) out->push_back(',');
        AppendJsonString(s.type()->field(f)->name(), out);
        out->push_back(':');
        AppendJsonValue(*s.field(f), i, out);
      }
      out->push_back('}');
      return;
    }
    case Type::LIST: case Type::LARGE_LIST: case Type::FIXED_SIZE_LIST: {
      int64_t begin, end;
      std::shared_ptr<arrow::Array> values;
      if (array.type_id() == Type::LIST) {
        const auto& l = static_cast<const arrow::ListArray&>(array);
        begin = l.value_offset(i); end = begin + l.value_length(i); values = l.values();
      } else if (array.type_id() == Type::LARGE_LIST) {
        const auto& l = static_cast<const arrow::LargeListArray&>(array);
        begin = l.value_offset(i); end = begin + l.value_length(i); values = l.values();
      } else {
        const auto& l = static_cast<const arrow::FixedSizeListArray&>(array);
        begin = l.value_offset(i); end = begin + l.value_length(i); values = l.values();
      }
      out->push_back('[');
      for (int64_t k = begin; k < end; ++k) {
        if (k > begin) out->push_back(',');
        AppendJsonValue(*values, k, out);
      }
      out->push_back(']');
      return;
    }
    case Type::MAP: {
      const auto& m = static_cast<const arrow::MapArray&>(array);
      int64_t begin = m.value_offset(i), end = begin + m.value_length(i);
      out->push_back('{');
      for (int64_t k = begin; k < end; ++k) {
        if (k > begin) out->push_back(',');
        std::string key;
        if (m.keys()->IsNull(k) || !AppendScalarText(*m.keys(), k, &key)) {
          key.clear();
          AppendJsonValue(*m.keys(), k, &key);
        }
        AppendJsonString(key, out);
        out->push_back(':');
        AppendJsonValue(*m.items(), k, out);
      }
      out->push_back('}');
      return;
    }
    case Type::DENSE_UNION: case Type::SPARSE_UNION: {
      const auto& u = static_cast<const arrow::UnionArray&>(array);
      int child = u.child_id(i);
      int64_t offset = array.type_id() == Type::DENSE_UNION
                           ? static_cast<const arrow::DenseUnionArray&>(array).value_offset(i) : i;
      AppendJsonValue(*u.field(child), offset, out);
      return;
    }
    case Type::DICTIONARY: {
      const auto& d = static_cast<const arrow::DictionaryArray&>(array);
      AppendJsonValue(*d.dictionary(), d.GetValueIndex(i), out);
      return;
    }
    default: {
      std::string text;
      if (AppendScalarText(array, i, &text)) {
        AppendJsonString(text, out);
      } else {
        auto scalar = array.GetScalar(i);
        AppendJsonString(scalar.ok() ? (*scalar)->ToString() : "", out);
      }
    }
  }
}

namespace {

// ---- casts --------------------------------------------------------------------------------

Result<ArrayPtr> ArrowCast(const ArrayPtr& array, const TypePtr& target, bool safe) {
  arrow::compute::CastOptions options = safe ? arrow::compute::CastOptions::Safe(target)
                                             : arrow::compute::CastOptions::Unsafe(target);
  auto result = arrow::compute::Cast(*array, target, options);
  if (!result.ok()) return Status::InvalidInput(result.status().ToString());
  return *result;
}

Result<ArrayPtr> ToUtf8(const ArrayPtr& array) {
  const int64_t n = array->length();
  arrow::StringBuilder builder;
  OG_ARROW_RETURN(builder.Reserve(n), "reserve");
  std::string text;
  const arrow::Type::type id = array->type_id();
  const bool nested = arrow::is_nested(id) || id == arrow::Type::DICTIONARY;
  for (int64_t i = 0; i < n; ++i) {
    if (array->IsNull(i)) { OG_ARROW_RETURN(builder.AppendNull(), "append"); continue; }
    text.clear();
    if (IsUnionId(id)) {
      const auto& u = static_cast<const arrow::UnionArray&>(*array);
      int64_t offset = id == arrow::Type::DENSE_UNION
                           ? static_cast<const arrow::DenseUnionArray&>(*array).value_offset(i) : i;
      const auto& child = *u.field(u.child_id(i));
      if (child.IsNull(offset)) { OG_ARROW_RETURN(builder.AppendNull(), "append"); continue; }
      if (!AppendScalarText(child, offset, &text)) {
        text.clear();
        AppendJsonValue(child, offset, &text);
      }
    } else if (nested) {
      AppendJsonValue(*array, i, &text);
    } else if (!AppendScalarText(*array, i, &text)) {
      OG_ARROW_RETURN(builder.AppendNull(), "append");
      continue;
    }
    OG_ARROW_RETURN(builder.Append(text), "append");
  }
  ArrayPtr out;
  OG_ARROW_RETURN(builder.Finish(&out), "finish");
  return out;
}

Result<ArrayPtr> BinaryToString(const ArrayPtr& array, const TypePtr& target) {
  arrow::StringBuilder builder;
  OG_ARROW_RETURN(builder.Reserve(array->length()), "reserve");
  arrow::Status st;
  ForEachView(*array, [&](int64_t, bool null, std::string_view v) {
    if (null || !IsValidUtf8(v)) st &= builder.AppendNull();
    else st &= builder.Append(v);
  });
  OG_ARROW_RETURN(st, "append");
  ArrayPtr out;
  OG_ARROW_RETURN(builder.Finish(&out), "finish");
  if (!out->type()->Equals(*target)) return ArrowCast(out, target, false);
  return out;
}

template <typename T>
bool InRange(double v) {
  // [min, max] of T as doubles; the upper bound is exclusive at 2^k.
  return v >= static_cast<double>(std::numeric_limits<T>::min()) &&
         v < -2.0 * static_cast<double>(std::numeric_limits<T>::min() / 2) + (std::is_signed_v<T> ? 0.0 : 1.0) &&
         v <= static_cast<double>(std::numeric_limits<T>::max());
}

template <typename T>
bool IntFits(int64_t v) {
  if constexpr (std::is_signed_v<T>) {
    return v >= static_cast<int64_t>(std::numeric_limits<T>::min()) &&
           v <= static_cast<int64_t>(std::numeric_limits<T>::max());
  } else {
    return v >= 0 && static_cast<uint64_t>(v) <= static_cast<uint64_t>(std::numeric_limits<T>::max());
  }
}

// Reads element i of a numeric (integer/float/bool) array as int64 (exact) or double.
struct NumericReader {
  const arrow::Array* array;
  arrow::Type::type id;
  bool is_float() const { return IsFloatId(id); }
  // false for uint64 values beyond int64.
  bool Int(int64_t i, int64_t* out) const {
    using arrow::Type;
    switch (id) {
      case Type::BOOL: *out = static_cast<const arrow::BooleanArray*>(array)->Value(i); return true;
      case Type::INT8: *out = static_cast<const arrow::Int8Array*>(array)->Value(i); return true;
      case Type::INT16: *out = static_cast<const arrow::Int16Array*>(array)->Value(i); return true;
      case Type::INT32: *out = static_cast<const arrow::Int32Array*>(array)->Value(i); return true;
      case Type::INT64: *out = static_cast<const arrow::Int64Array*>(array)->Value(i); return true;
      case Type::UINT8: *out = static_cast<const arrow::UInt8Array*>(array)->Value(i); return true;
      case Type::UINT16: *out = static_cast<const arrow::UInt16Array*>(array)->Value(i); return true;
      case Type::UINT32: *out = static_cast<const arrow::UInt32Array*>(array)->Value(i); return true;
      case Type::UINT64: {
        uint64_t v = static_cast<const arrow::UInt64Array*>(array)->Value(i);
        if (v > static_cast<uint64_t>(std::numeric_limits<int64_t>::max())) return false;
        *out = static_cast<int64_t>(v);
        return true;
      }
      default: return false;
    }
  }
  double Double(int64_t i) const {
    using arrow::Type;
    switch (id) {
      case Type::HALF_FLOAT: return arrow::util::Float16::FromBits(static_cast<const arrow::HalfFloatArray*>(array)->Value(i)).ToFloat();
      case Type::FLOAT: return static_cast<const arrow::FloatArray*>(array)->Value(i);
      case Type::DOUBLE: return static_cast<const arrow::DoubleArray*>(array)->Value(i);
      case Type::UINT64: return static_cast<double>(static_cast<const arrow::UInt64Array*>(array)->Value(i));
      default: {
        int64_t v = 0;
        Int(i, &v);
        return static_cast<double>(v);
      }
    }
  }
};

bool IsNumericSource(arrow::Type::type id) {
  return id == arrow::Type::BOOL || IsIntegerId(id) || IsFloatId(id);
}

// Decimal helpers: a Decimal128 at scale `from` to (precision, scale); false if it does not fit.
bool Rescale(arrow::Decimal128 value, int32_t from, int32_t precision, int32_t scale,
             arrow::Decimal128* out) {
  if (from > scale) {
    value = value.ReduceScaleBy(from - scale, /*round=*/true);
  } else if (from < scale) {
    int32_t grow = scale - from;
    if (precision - grow <= 0) {
      if (value != 0) return false;
    } else if (!value.FitsInPrecision(precision - grow)) {
      return false;
    }
    value = value.IncreaseScaleBy(grow);
  }
  if (!value.FitsInPrecision(precision)) return false;
  *out = value;
  return true;
}

template <typename ArrowType>
Result<ArrayPtr> CastToInteger(const ArrayPtr& array, const TypePtr& target) {
  using T = typename ArrowType::c_type;
  const auto id = array->type_id();
  const int64_t n = array->length();
  if (IsStringLike(id)) {
    std::vector<std::string_view> views(static_cast<size_t>(n));
    std::vector<uint8_t> valid(static_cast<size_t>(n));
    ForEachView(*array, [&](int64_t i, bool null, std::string_view v) { views[i] = v; valid[i] = !null; });
    return BuildPrimitive<ArrowType>(target, n, [&](int64_t i, T* out) {
      int64_t v;
      if (!valid[i]) return false;
      if (!ParseInt64(views[i], &v) && !ParseIntegralPart(views[i], &v)) return false;
      if (!IntFits<T>(v)) return false;
      *out = static_cast<T>(v);
      return true;
    });
  }
  if (IsNumericSource(id)) {
    NumericReader reader{array.get(), id};
    return BuildPrimitive<ArrowType>(target, n, [&](int64_t i, T* out) {
      if (array->IsNull(i)) return false;
      if (reader.is_float()) {
        double d = reader.Double(i);
        if (!std::isfinite(d)) return false;
        d = std::trunc(d);
        if (!InRange<T>(d)) return false;
        *out = static_cast<T>(d);
        return true;
      }
      int64_t v;
      if (!reader.Int(i, &v)) {
        if constexpr (std::is_same_v<T, uint64_t>) {
          *out = static_cast<const arrow::UInt64Array&>(*array).Value(i);
          return true;
        }
        return false;
      }
      if (!IntFits<T>(v)) return false;
      *out = static_cast<T>(v);
      return true;
    });
  }
  if (id == arrow::Type::DECIMAL128) {
    const auto& dec = static_cast<const arrow::Decimal128Array&>(*array);
    const int32_t scale = static_cast<const arrow::Decimal128Type&>(*array->type()).scale();
    const arrow::Decimal128 lo(std::numeric_limits<int64_t>::min()), hi(std::numeric_limits<int64_t>::max());
    return BuildPrimitive<ArrowType>(target, n, [&](int64_t i, T* out) {
      if (dec.IsNull(i)) return false;
      arrow::Decimal128 v(dec.GetValue(i));
      if (scale > 0) v = v.ReduceScaleBy(scale, /*round=*/false);
      else if (scale < 0) return false;
      if (v < lo || v > hi) return false;
      int64_t x = static_cast<int64_t>(v.low_bits());
      if (!IntFits<T>(x)) return false;
      *out = static_cast<T>(x);
      return true;
    });
  }
  if (id == arrow::Type::TIMESTAMP) {
    const auto& ts = static_cast<const arrow::TimestampArray&>(*array);
    const int64_t per = UnitsPerSecond(static_cast<const arrow::TimestampType&>(*array->type()).unit());
    return BuildPrimitive<ArrowType>(target, n, [&](int64_t i, T* out) {
      if (ts.IsNull(i)) return false;
      int64_t s = FloorDiv(ts.Value(i), per);
      if (!IntFits<T>(s)) return false;
      *out = static_cast<T>(s);
      return true;
    });
  }
  return Nulls(target, n);
}

template <typename ArrowType>
Result<ArrayPtr> CastToFloating(const ArrayPtr& array, const TypePtr& target) {
  using T = typename ArrowType::c_type;
  const auto id = array->type_id();
  const int64_t n = array->length();
  auto narrow = [](double d, T* out) {
    if constexpr (std::is_same_v<T, float>) {
      if (std::isfinite(d) && std::fabs(d) > std::numeric_limits<float>::max()) return false;
    }
    *out = static_cast<T>(d);
    return true;
  };
  if (IsStringLike(id)) {
    std::vector<std::string_view> views(static_cast<size_t>(n));
    std::vector<uint8_t> valid(static_cast<size_t>(n));
    ForEachView(*array, [&](int64_t i, bool null, std::string_view v) { views[i] = v; valid[i] = !null; });
    return BuildPrimitive<ArrowType>(target, n, [&](int64_t i, T* out) {
      double d;
      if (!valid[i] || !ParseDouble(views[i], &d)) return false;
      return narrow(d, out);
    });
  }
  if (IsNumericSource(id)) {
    NumericReader reader{array.get(), id};
    return BuildPrimitive<ArrowType>(target, n, [&](int64_t i, T* out) {
      if (array->IsNull(i)) return false;
      return narrow(reader.Double(i), out);
    });
  }
  if (id == arrow::Type::DECIMAL128) {
    const auto& dec = static_cast<const arrow::Decimal128Array&>(*array);
    const int32_t scale = static_cast<const arrow::Decimal128Type&>(*array->type()).scale();
    return BuildPrimitive<ArrowType>(target, n, [&](int64_t i, T* out) {
      if (dec.IsNull(i)) return false;
      return narrow(arrow::Decimal128(dec.GetValue(i)).ToDouble(scale), out);
    });
  }
  if (id == arrow::Type::TIMESTAMP) {
    const auto& ts = static_cast<const arrow::TimestampArray&>(*array);
    const double per = static_cast<double>(UnitsPerSecond(static_cast<const arrow::TimestampType&>(*array->type()).unit()));
    return BuildPrimitive<ArrowType>(target, n, [&](int64_t i, T* out) {
      if (ts.IsNull(i)) return false;
      return narrow(static_cast<double>(ts.Value(i)) / per, out);
    });
  }
  return Nulls(target, n);
}

Result<ArrayPtr> CastToDecimal(const ArrayPtr& array, const TypePtr& target) {
  const auto& type = static_cast<const arrow::Decimal128Type&>(*target);
  const int32_t precision = type.precision(), scale = type.scale();
  const auto id = array->type_id();
  const int64_t n = array->length();
  arrow::Decimal128Builder builder(target);
  OG_ARROW_RETURN(builder.Reserve(n), "reserve");
  auto emit = [&](bool ok, const arrow::Decimal128& v) {
    if (ok) builder.UnsafeAppend(v);
    else builder.UnsafeAppendNull();
  };
  if (IsStringLike(id)) {
    ForEachView(*array, [&](int64_t, bool null, std::string_view v) {
      arrow::Decimal128 value, out;
      int32_t p = 0, s = 0;
      bool ok = !null;
      if (ok) {
        std::string_view t = Trim(v);
        if (!t.empty() && t[0] == '+') t.remove_prefix(1);
        ok = !t.empty() && arrow::Decimal128::FromString(t, &value, &p, &s).ok() &&
             Rescale(value, s, precision, scale, &out);
      }
      emit(ok, out);
    });
  } else if (id == arrow::Type::DECIMAL128) {
    const auto& dec = static_cast<const arrow::Decimal128Array&>(*array);
    const int32_t from = static_cast<const arrow::Decimal128Type&>(*array->type()).scale();
    for (int64_t i = 0; i < n; ++i) {
      arrow::Decimal128 out;
      bool ok = dec.IsValid(i) && Rescale(arrow::Decimal128(dec.GetValue(i)), from, precision, scale, &out);
      emit(ok, out);
    }
  } else if (IsNumericSource(id)) {
    NumericReader reader{array.get(), id};
    for (int64_t i = 0; i < n; ++i) {
      arrow::Decimal128 out;
      bool ok = array->IsValid(i);
      if (ok && reader.is_float()) {
        double d = reader.Double(i);
        auto r = std::isfinite(d) ? arrow::Decimal128::FromReal(d, precision, scale)
                                  : arrow::Result<arrow::Decimal128>(arrow::Status::Invalid("nan"));
        ok = r.ok();
        if (ok) out = *r;
      } else if (ok) {
        int64_t v;
        ok = reader.Int(i, &v) && Rescale(arrow::Decimal128(v), 0, precision, scale, &out);
      }
      emit(ok, out);
    }
  } else {
    return Nulls(target, n);
  }
  ArrayPtr out;
  OG_ARROW_RETURN(builder.Finish(&out), "finish");
  return out;
}

Result<ArrayPtr> CastToBool(const ArrayPtr& array, const TypePtr& target) {
  const auto id = array->type_id();
  const int64_t n = array->length();
  arrow::BooleanBuilder builder;
  OG_ARROW_RETURN(builder.Reserve(n), "reserve");
  if (IsStringLike(id)) {
    ForEachView(*array, [&](int64_t, bool null, std::string_view v) {
      bool b;
      if (!null && ParseBool(v, &b)) builder.UnsafeAppend(b);
      else builder.UnsafeAppendNull();
    });
  } else if (IsNumericSource(id)) {
    NumericReader reader{array.get(), id};
    for (int64_t i = 0; i < n; ++i) {
      if (array->IsNull(i)) { builder.UnsafeAppendNull(); continue; }
      double d = reader.Double(i);
      if (std::isnan(d)) builder.UnsafeAppendNull();
      else builder.UnsafeAppend(d != 0);
    }
  } else if (id == arrow::Type::DECIMAL128) {
    const auto& dec = static_cast<const arrow::Decimal128Array&>(*array);
    for (int64_t i = 0; i < n; ++i) {
      if (dec.IsNull(i)) builder.UnsafeAppendNull();
      else builder.UnsafeAppend(arrow::Decimal128(dec.GetValue(i)) != 0);
    }
  } else {
    return Nulls(target, n);
  }
  ArrayPtr out;
  OG_ARROW_RETURN(builder.Finish(&out), "finish");
  return out;
}

Result<ArrayPtr> CastToDate(const ArrayPtr& array, const TypePtr& target) {
  const auto id = array->type_id();
  const int64_t n = array->length();
  if (target->id() != arrow::Type::DATE32) {
    OG_ASSIGN_OR_RETURN(ArrayPtr d32, CastToDate(array, arrow::date32()));
    return ArrowCast(d32, target, false);
  }
  if (IsStringLike(id)) {
    std::vector<std::string_view> views(static_cast<size_t>(n));
    std::vector<uint8_t> valid(static_cast<size_t>(n));
    ForEachView(*array, [&](int64_t i, bool null, std::string_view v) { views[i] = v; valid[i] = !null; });
    return BuildPrimitive<arrow::Date32Type>(target, n, [&](int64_t i, int32_t* out) {
      return valid[i] && ParseDate(views[i], out);
    });
  }
  if (id == arrow::Type::TIMESTAMP) {
    const auto& ts = static_cast<const arrow::TimestampArray&>(*array);
    const int64_t per_day = 86400 * UnitsPerSecond(static_cast<const arrow::TimestampType&>(*array->type()).unit());
    return BuildPrimitive<arrow::Date32Type>(target, n, [&](int64_t i, int32_t* out) {
      if (ts.IsNull(i)) return false;
      *out = static_cast<int32_t>(FloorDiv(ts.Value(i), per_day));
      return true;
    });
  }
  if (id == arrow::Type::DATE64) {
    const auto& d = static_cast<const arrow::Date64Array&>(*array);
    return BuildPrimitive<arrow::Date32Type>(target, n, [&](int64_t i, int32_t* out) {
      if (d.IsNull(i)) return false;
      *out = static_cast<int32_t>(FloorDiv(d.Value(i), 86400000));
      return true;
    });
  }
  return Nulls(target, n);
}

Result<ArrayPtr> CastToTimestamp(const ArrayPtr& array, const TypePtr& target) {
  const auto id = array->type_id();
  const int64_t n = array->length();
  const int64_t per = UnitsPerSecond(static_cast<const arrow::TimestampType&>(*target).unit());
  auto from_seconds = [per](int64_t seconds, int64_t nanos, int64_t* out) {
    int64_t v;
    if (__builtin_mul_overflow(seconds, per, &v)) return false;
    if (__builtin_add_overflow(v, nanos / (1000000000 / per), &v)) return false;
    *out = v;
    return true;
  };
  if (IsStringLike(id)) {
    std::vector<std::string_view> views(static_cast<size_t>(n));
    std::vector<uint8_t> valid(static_cast<size_t>(n));
    ForEachView(*array, [&](int64_t i, bool null, std::string_view v) { views[i] = v; valid[i] = !null; });
    return BuildPrimitive<arrow::TimestampType>(target, n, [&](int64_t i, int64_t* out) {
      int64_t s, ns;
      return valid[i] && ParseTimestamp(views[i], &s, &ns) && from_seconds(s, ns, out);
    });
  }
  if (id == arrow::Type::DATE32 || id == arrow::Type::DATE64) {
    return BuildPrimitive<arrow::TimestampType>(target, n, [&](int64_t i, int64_t* out) {
      if (array->IsNull(i)) return false;
      int64_t days = id == arrow::Type::DATE32 ? static_cast<const arrow::Date32Array&>(*array).Value(i)
                                               : FloorDiv(static_cast<const arrow::Date64Array&>(*array).Value(i), 86400000);
      return from_seconds(days * 86400, 0, out);
    });
  }
  if (id == arrow::Type::TIMESTAMP) {
    const auto& ts = static_cast<const arrow::TimestampArray&>(*array);
    const int64_t from = UnitsPerSecond(static_cast<const arrow::TimestampType&>(*array->type()).unit());
    return BuildPrimitive<arrow::TimestampType>(target, n, [&](int64_t i, int64_t* out) {
      if (ts.IsNull(i)) return false;
      int64_t v = ts.Value(i);
      if (from >= per) { *out = FloorDiv(v, from / per); return true; }
      return !__builtin_mul_overflow(v, per / from, out);
    });
  }
  if (IsNumericSource(id) && id != arrow::Type::BOOL) {
    NumericReader reader{array.get(), id};
    return BuildPrimitive<arrow::TimestampType>(target, n, [&](int64_t i, int64_t* out) {
      if (array->IsNull(i)) return false;
      if (reader.is_float()) {
        double d = reader.Double(i) * static_cast<double>(per);
        if (!std::isfinite(d) || !InRange<int64_t>(std::trunc(d))) return false;
        *out = static_cast<int64_t>(d);
        return true;
      }
      int64_t s;
      return reader.Int(i, &s) && from_seconds(s, 0, out);
    });
  }
  return Nulls(target, n);
}

// The validity bitmap of `array` re-based to offset 0 (children taken with field() are sliced).
Result<std::shared_ptr<arrow::Buffer>> ZeroOffsetBitmap(const arrow::Array& array) {
  if (array.null_bitmap() == nullptr || array.null_count() == 0) return std::shared_ptr<arrow::Buffer>();
  if (array.offset() == 0) return array.null_bitmap();
  OG_ARROW_ASSIGN(std::shared_ptr<arrow::Buffer> out,
                  arrow::internal::CopyBitmap(arrow::default_memory_pool(), array.null_bitmap_data(),
                                              array.offset(), array.length()),
                  "bitmap");
  return out;
}

const arrow::Field* FindField(const arrow::StructType& type, const std::string& name, int* index) {
  int exact = type.GetFieldIndex(name);
  if (exact >= 0) { *index = exact; return type.field(exact).get(); }
  std::string lower = ToLower(name);
  for (int f = 0; f < type.num_fields(); ++f) {
    if (ToLower(type.field(f)->name()) == lower) { *index = f; return type.field(f).get(); }
  }
  return nullptr;
}

Result<ArrayPtr> CastUnion(const ArrayPtr& array, const TypePtr& target);

Result<ArrayPtr> CastStruct(const ArrayPtr& array, const TypePtr& target) {
  if (array->type_id() != arrow::Type::STRUCT) return Nulls(target, array->length());
  const auto& source = static_cast<const arrow::StructArray&>(*array);
  const auto& source_type = static_cast<const arrow::StructType&>(*array->type());
  const auto& target_type = static_cast<const arrow::StructType&>(*target);
  std::vector<ArrayPtr> children;
  std::vector<std::shared_ptr<arrow::Field>> fields;
  for (const auto& field : target_type.fields()) {
    int index;
    ArrayPtr child;
    if (FindField(source_type, field->name(), &index) != nullptr) {
      // field(i) applies the struct's offset and length.
      OG_ASSIGN_OR_RETURN(child, GlueCast(source.field(index), field->type()));
    } else {
      OG_ASSIGN_OR_RETURN(child, Nulls(field->type(), array->length()));
    }
    fields.push_back(field->nullable() || child->null_count() == 0 ? field : field->WithNullable(true));
    children.push_back(std::move(child));
  }
  auto type = arrow::struct_(fields);
  OG_ASSIGN_OR_RETURN(auto bitmap, ZeroOffsetBitmap(source));
  return MakeArr<arrow::StructArray>(type, array->length(), children, bitmap,
                                              source.null_count());
}

Result<ArrayPtr> CastList(const ArrayPtr& array, const TypePtr& target) {
  const auto id = array->type_id();
  if (!IsListId(id) || id == arrow::Type::LIST_VIEW || id == arrow::Type::LARGE_LIST_VIEW)
    return Nulls(target, array->length());
  ArrayPtr normalized = array;
  // Bring the source to the target's list layout with the element type unchanged, then cast the
  // values (which keeps offsets and validity).
  TypePtr value_type;
  if (id == arrow::Type::LIST) value_type = static_cast<const arrow::ListType&>(*array->type()).value_type();
  else if (id == arrow::Type::LARGE_LIST) value_type = static_cast<const arrow::LargeListType&>(*array->type()).value_type();
  else value_type = static_cast<const arrow::FixedSizeListType&>(*array->type()).value_type();
  const auto& target_list = static_cast<const arrow::BaseListType&>(*target);
  TypePtr layout;
  if (target->id() == arrow::Type::LARGE_LIST) layout = arrow::large_list(value_type);
  else layout = arrow::list(value_type);
  if (!array->type()->Equals(*layout)) {
    OG_ASSIGN_OR_RETURN(normalized, ArrowCast(array, layout, false));
  }
  if (layout->id() == arrow::Type::LIST) {
    const auto& l = static_cast<const arrow::ListArray&>(*normalized);
    OG_ASSIGN_OR_RETURN(ArrayPtr values, GlueCast(l.values(), target_list.value_type()));
    return MakeArr<arrow::ListArray>(arrow::list(target_list.value_field()->WithType(values->type())),
                                              l.length(), l.value_offsets(), values, l.null_bitmap(),
                                              l.null_count(), l.offset());
  }
  const auto& l = static_cast<const arrow::LargeListArray&>(*normalized);
  OG_ASSIGN_OR_RETURN(ArrayPtr values, GlueCast(l.values(), target_list.value_type()));
  return MakeArr<arrow::LargeListArray>(arrow::large_list(target_list.value_field()->WithType(values->type())),
                                                 l.length(), l.value_offsets(), values, l.null_bitmap(),
                                                 l.null_count(), l.offset());
}

Result<ArrayPtr> CastMap(const ArrayPtr& array, const TypePtr& target) {
  if (array->type_id() != arrow::Type::MAP) return Nulls(target, array->length());
  const auto& m = static_cast<const arrow::MapArray&>(*array);
  const auto& target_map = static_cast<const arrow::MapType&>(*target);
  OG_ASSIGN_OR_RETURN(ArrayPtr keys, GlueCast(m.keys(), target_map.key_type()));
  OG_ASSIGN_OR_RETURN(ArrayPtr items, GlueCast(m.items(), target_map.item_type()));
  if (keys->null_count() > 0) return Nulls(target, array->length());  // map keys cannot be null
  TypePtr type = arrow::map(keys->type(), items->type(), target_map.keys_sorted());
  return MakeArr<arrow::MapArray>(type, m.length(), m.value_offsets(), keys, items,
                                           m.null_bitmap(), m.null_count(), m.offset());
}

// choice -> target: each member cast, then rows picked from their member's cast values.
Result<ArrayPtr> CastUnion(const ArrayPtr& array, const TypePtr& target) {
  const auto& u = static_cast<const arrow::UnionArray&>(*array);
  const int64_t n = array->length();
  const bool dense = array->type_id() == arrow::Type::DENSE_UNION;
  const auto& type = static_cast<const arrow::UnionType&>(*array->type());
  std::vector<ArrayPtr> casted;
  std::vector<int64_t> base;
  int64_t total = 0;
  for (int c = 0; c < u.num_fields(); ++c) {
    ArrayPtr child = u.field(c);
    OG_ASSIGN_OR_RETURN(ArrayPtr cast, GlueCast(child, target));
    base.push_back(total);
    total += cast->length();
    casted.push_back(std::move(cast));
  }
  (void)type;
  arrow::Int64Builder indices;
  OG_ARROW_RETURN(indices.Reserve(n), "reserve");
  for (int64_t i = 0; i < n; ++i) {
    int c = u.child_id(i);
    int64_t offset = dense ? static_cast<const arrow::DenseUnionArray&>(u).value_offset(i) : i + u.offset();
    indices.UnsafeAppend(base[static_cast<size_t>(c)] + offset);
  }
  ArrayPtr index_array;
  OG_ARROW_RETURN(indices.Finish(&index_array), "finish");
  if (casted.empty()) return Nulls(target, n);
  OG_ARROW_ASSIGN(ArrayPtr all, arrow::Concatenate(casted), "concatenate");
  OG_ARROW_ASSIGN(arrow::Datum taken, arrow::compute::Take(all, index_array), "take");
  return taken.make_array();
}

// The Glue type name of an Arrow type (CONTRACT.md's table), for choosing a union member.
std::string GlueTypeName(const arrow::DataType& type) {
  switch (type.id()) {
    case arrow::Type::BOOL: return "boolean";
    case arrow::Type::INT8: return "byte";
    case arrow::Type::INT16: return "short";
    case arrow::Type::INT32: return "int";
    case arrow::Type::INT64: return "long";
    case arrow::Type::FLOAT: return "float";
    case arrow::Type::DOUBLE: return "double";
    case arrow::Type::DECIMAL128: return "decimal";
    case arrow::Type::STRING: case arrow::Type::LARGE_STRING: return "string";
    case arrow::Type::BINARY: case arrow::Type::LARGE_BINARY: return "binary";
    case arrow::Type::DATE32: return "date";
    case arrow::Type::TIMESTAMP: return "timestamp";
    case arrow::Type::LIST: case arrow::Type::LARGE_LIST: return "array";
    case arrow::Type::STRUCT: return "struct";
    case arrow::Type::MAP: return "map";
    default: return "null";
  }
}

Result<ArrayPtr> CastIntoUnion(const ArrayPtr& array, const TypePtr& target) {
  const auto& type = static_cast<const arrow::UnionType&>(*target);
  if (target->id() != arrow::Type::DENSE_UNION || type.num_fields() == 0) return Nulls(target, array->length());
  int member = 0;
  const std::string name = GlueTypeName(*array->type());
  for (int f = 0; f < type.num_fields(); ++f)
    if (type.field(f)->name() == name) { member = f; break; }
  const int64_t n = array->length();
  std::vector<ArrayPtr> children;
  for (int f = 0; f < type.num_fields(); ++f) {
    if (f == member) {
      OG_ASSIGN_OR_RETURN(ArrayPtr c, GlueCast(array, type.field(f)->type()));
      children.push_back(c);
    } else {
      OG_ASSIGN_OR_RETURN(ArrayPtr c, Nulls(type.field(f)->type(), 0));
      children.push_back(c);
    }
  }
  arrow::Int8Builder codes;
  arrow::Int32Builder offsets;
  OG_ARROW_RETURN(codes.Reserve(n), "reserve");
  OG_ARROW_RETURN(offsets.Reserve(n), "reserve");
  for (int64_t i = 0; i < n; ++i) {
    codes.UnsafeAppend(type.type_codes()[static_cast<size_t>(member)]);
    offsets.UnsafeAppend(static_cast<int32_t>(i));
  }
  ArrayPtr code_array, offset_array;
  OG_ARROW_RETURN(codes.Finish(&code_array), "finish");
  OG_ARROW_RETURN(offsets.Finish(&offset_array), "finish");
  std::vector<std::string> names;
  for (const auto& f : type.fields()) names.push_back(f->name());
  OG_ARROW_ASSIGN(ArrayPtr out,
                  arrow::DenseUnionArray::Make(*code_array, *offset_array, children, names, type.type_codes()),
                  "union");
  return out;
}

}  // namespace

Result<ArrayPtr> GlueCast(const ArrayPtr& array, const TypePtr& target) {
  if (array == nullptr || target == nullptr) return Status::InvalidInput("GlueCast: null argument");
  try {
    const TypePtr& source = array->type();
    if (source->Equals(*target)) return array;
    const auto sid = source->id();
    const auto tid = target->id();
    const int64_t n = array->length();
    if (sid == arrow::Type::NA || tid == arrow::Type::NA) return Nulls(target, n);
    if (sid == arrow::Type::DICTIONARY) {
      OG_ASSIGN_OR_RETURN(ArrayPtr plain, ArrowCast(array, static_cast<const arrow::DictionaryType&>(*source).value_type(), false));
      return GlueCast(plain, target);
    }
    if (sid == arrow::Type::EXTENSION) {
      return GlueCast(static_cast<const arrow::ExtensionArray&>(*array).storage(), target);
    }
    if (IsUnionId(sid)) {
      if (tid == arrow::Type::STRING || tid == arrow::Type::LARGE_STRING) {
        OG_ASSIGN_OR_RETURN(ArrayPtr text, ToUtf8(array));
        return tid == arrow::Type::STRING ? text : ArrowCast(text, target, false);
      }
      if (IsUnionId(tid)) {
        // choice -> choice: each row through its member's name; simplest as struct-free rebuild.
        return Nulls(target, n);
      }
      return CastUnion(array, target);
    }
    switch (tid) {
      case arrow::Type::DENSE_UNION: case arrow::Type::SPARSE_UNION: return CastIntoUnion(array, target);
      case arrow::Type::STRUCT: return CastStruct(array, target);
      case arrow::Type::LIST: case arrow::Type::LARGE_LIST: return CastList(array, target);
      case arrow::Type::MAP: return CastMap(array, target);
      case arrow::Type::INT8: return CastToInteger<arrow::Int8Type>(array, target);
      case arrow::Type::INT16: return CastToInteger<arrow::Int16Type>(array, target);
      case arrow::Type::INT32: return CastToInteger<arrow::Int32Type>(array, target);
      case arrow::Type::INT64: return CastToInteger<arrow::Int64Type>(array, target);
      case arrow::Type::UINT8: return CastToInteger<arrow::UInt8Type>(array, target);
      case arrow::Type::UINT16: return CastToInteger<arrow::UInt16Type>(array, target);
      case arrow::Type::UINT32: return CastToInteger<arrow::UInt32Type>(array, target);
      case arrow::Type::UINT64: return CastToInteger<arrow::UInt64Type>(array, target);
      case arrow::Type::FLOAT: return CastToFloating<arrow::FloatType>(array, target);
      case arrow::Type::DOUBLE: return CastToFloating<arrow::DoubleType>(array, target);
      case arrow::Type::DECIMAL128: return CastToDecimal(array, target);
      case arrow::Type::BOOL: return CastToBool(array, target);
      case arrow::Type::DATE32: case arrow::Type::DATE64: return CastToDate(array, target);
      case arrow::Type::TIMESTAMP: return CastToTimestamp(array, target);
      case arrow::Type::STRING: case arrow::Type::LARGE_STRING: {
        if (IsStringLike(sid)) return ArrowCast(array, target, false);
        if (IsBinaryLike(sid)) return BinaryToString(array, target);
        OG_ASSIGN_OR_RETURN(ArrayPtr text, ToUtf8(array));
        return tid == arrow::Type::STRING ? text : ArrowCast(text, target, false);
      }
      case arrow::Type::BINARY: case arrow::Type::LARGE_BINARY:
        if (IsStringLike(sid) || IsBinaryLike(sid)) {
          auto r = ArrowCast(array, target, false);
          if (r.ok()) return r;
        }
        return Nulls(target, n);
      default: {
        auto r = ArrowCast(array, target, true);
        if (r.ok()) return r;
        return Nulls(target, n);
      }
    }
  } catch (const std::exception& e) {
    return Status::Internal(std::string("cast failed: ") + e.what());
  }
}

Result<std::shared_ptr<arrow::RecordBatch>> Conform(const std::shared_ptr<arrow::RecordBatch>& batch,
                                                    const std::shared_ptr<arrow::Schema>& schema) {
  if (batch == nullptr || schema == nullptr) return Status::InvalidInput("Conform: null argument");
  const auto source_type = arrow::struct_(batch->schema()->fields());
  const auto& st = static_cast<const arrow::StructType&>(*source_type);
  std::vector<ArrayPtr> columns;
  std::vector<std::shared_ptr<arrow::Field>> fields;
  for (const auto& field : schema->fields()) {
    int index;
    ArrayPtr column;
    if (FindField(st, field->name(), &index) != nullptr) {
      OG_ASSIGN_OR_RETURN(column, GlueCast(batch->column(index), field->type()));
    } else {
      OG_ASSIGN_OR_RETURN(column, Nulls(field->type(), batch->num_rows()));
    }
    fields.push_back(field->nullable() || column->null_count() == 0 ? field : field->WithNullable(true));
    if (!column->type()->Equals(*field->type())) fields.back() = fields.back()->WithType(column->type());
    columns.push_back(std::move(column));
  }
  return arrow::RecordBatch::Make(arrow::schema(fields, schema->metadata()), batch->num_rows(), columns);
}

namespace {

// The member of choice(T, string) that is T (T not string), or -1 for any other type.
int TextChoiceMember(const arrow::DataType& type) {
  if (type.id() != arrow::Type::DENSE_UNION || type.num_fields() != 2) return -1;
  for (int m = 0; m < 2; ++m) {
    if (type.field(1 - m)->type()->id() == arrow::Type::STRING &&
        type.field(m)->type()->id() != arrow::Type::STRING) {
      return m;
    }
  }
  return -1;
}

// Whether the cast lost value i of `text`: there was text, the cast gave null.
bool CastLost(const arrow::StringArray& text, const arrow::Array& cast, int64_t i) {
  return text.IsValid(i) && text.value_length(i) > 0 && cast.IsNull(i);
}

}  // namespace

Result<int64_t> TextCastLosses(const ArrayPtr& strings, const TypePtr& target) {
  if (strings->type_id() != arrow::Type::STRING || target->id() == arrow::Type::STRING) return 0;
  OG_ASSIGN_OR_RETURN(ArrayPtr cast, GlueCast(strings, target));
  const auto& text = static_cast<const arrow::StringArray&>(*strings);
  int64_t lost = 0;
  for (int64_t i = 0; i < text.length(); ++i) lost += CastLost(text, *cast, i) ? 1 : 0;
  return lost;
}

Result<ArrayPtr> CastTextPerValue(const ArrayPtr& strings, const TypePtr& target) {
  const int member = TextChoiceMember(*target);
  if (strings->type_id() != arrow::Type::STRING || member < 0) return GlueCast(strings, target);
  OG_ASSIGN_OR_RETURN(ArrayPtr cast, GlueCast(strings, target->field(member)->type()));
  const auto& text = static_cast<const arrow::StringArray&>(*strings);
  const int64_t n = text.length();
  const auto& codes = static_cast<const arrow::UnionType&>(*target).type_codes();
  const int8_t member_code = codes[static_cast<size_t>(member)];
  const int8_t text_code = codes[static_cast<size_t>(1 - member)];
  std::vector<int8_t> ids(static_cast<size_t>(n));
  std::vector<int32_t> offsets(static_cast<size_t>(n));
  arrow::BooleanBuilder in_member, in_text;
  OG_ARROW_RETURN(in_member.Reserve(n), "reserve");
  OG_ARROW_RETURN(in_text.Reserve(n), "reserve");
  int32_t members = 0, texts = 0;
  for (int64_t i = 0; i < n; ++i) {
    const bool lost = CastLost(text, *cast, i);
    in_member.UnsafeAppend(!lost);
    in_text.UnsafeAppend(lost);
    ids[static_cast<size_t>(i)] = lost ? text_code : member_code;
    offsets[static_cast<size_t>(i)] = lost ? texts++ : members++;
  }
  ArrayPtr member_mask, text_mask;
  OG_ARROW_RETURN(in_member.Finish(&member_mask), "finish");
  OG_ARROW_RETURN(in_text.Finish(&text_mask), "finish");
  OG_ARROW_ASSIGN(arrow::Datum member_values, arrow::compute::Filter(cast, member_mask), "filter");
  OG_ARROW_ASSIGN(arrow::Datum text_values, arrow::compute::Filter(strings, text_mask), "filter");
  auto data = arrow::ArrayData::Make(target, n,
                                     {nullptr, arrow::Buffer::FromVector(std::move(ids)),
                                      arrow::Buffer::FromVector(std::move(offsets))},
                                     0);
  data->child_data.resize(2);
  data->child_data[static_cast<size_t>(member)] = member_values.make_array()->data();
  data->child_data[static_cast<size_t>(1 - member)] = text_values.make_array()->data();
  return arrow::MakeArray(data);
}

namespace {

class ConformingReader : public arrow::RecordBatchReader {
 public:
  ConformingReader(std::shared_ptr<arrow::RecordBatchReader> input, std::shared_ptr<arrow::Schema> schema)
      : input_(std::move(input)), schema_(std::move(schema)) {}
  std::shared_ptr<arrow::Schema> schema() const override { return schema_; }
  arrow::Status ReadNext(std::shared_ptr<arrow::RecordBatch>* out) override {
    std::shared_ptr<arrow::RecordBatch> batch;
    ARROW_RETURN_NOT_OK(input_->ReadNext(&batch));
    if (batch == nullptr) { *out = nullptr; return arrow::Status::OK(); }
    auto conformed = Conform(batch, schema_);
    if (!conformed.ok()) return arrow::Status::Invalid(conformed.status().message());
    // Keep the declared schema exactly (readers check it), nullability aside.
    *out = arrow::RecordBatch::Make(schema_, (*conformed)->num_rows(), (*conformed)->columns());
    return arrow::Status::OK();
  }
  arrow::Status Close() override { return input_->Close(); }

 private:
  std::shared_ptr<arrow::RecordBatchReader> input_;
  std::shared_ptr<arrow::Schema> schema_;
};

}  // namespace

std::shared_ptr<arrow::RecordBatchReader> ConformReader(std::shared_ptr<arrow::RecordBatchReader> input,
                                                        std::shared_ptr<arrow::Schema> schema) {
  return std::make_shared<ConformingReader>(std::move(input), std::move(schema));
}

bool HasUnion(const TypePtr& type) {
  if (IsUnionId(type->id())) return true;
  for (const auto& f : type->fields())
    if (HasUnion(f->type())) return true;
  return false;
}

TypePtr UnionsToStructsType(const TypePtr& type) {
  if (!HasUnion(type)) return type;
  std::vector<std::shared_ptr<arrow::Field>> fields;
  for (const auto& f : type->fields()) fields.push_back(f->WithType(UnionsToStructsType(f->type())));
  switch (type->id()) {
    case arrow::Type::DENSE_UNION: case arrow::Type::SPARSE_UNION: {
      for (auto& f : fields) f = f->WithNullable(true);
      return arrow::struct_(fields);
    }
    case arrow::Type::STRUCT: return arrow::struct_(fields);
    case arrow::Type::LIST: return arrow::list(fields[0]);
    case arrow::Type::LARGE_LIST: return arrow::large_list(fields[0]);
    case arrow::Type::MAP: {
      const auto& entries = static_cast<const arrow::StructType&>(*fields[0]->type());
      return arrow::map(entries.field(0)->type(), entries.field(1)->type());
    }
    default: return type;
  }
}

Result<ArrayPtr> UnionsToStructs(const ArrayPtr& array) {
  const TypePtr target = UnionsToStructsType(array->type());
  if (target == array->type()) return array;
  const auto id = array->type_id();
  try {
    if (IsUnionId(id)) {
      const auto& u = static_cast<const arrow::UnionArray&>(*array);
      const bool dense = id == arrow::Type::DENSE_UNION;
      const int64_t n = array->length();
      std::vector<ArrayPtr> children;
      for (int c = 0; c < u.num_fields(); ++c) {
        arrow::Int64Builder indices;
        OG_ARROW_RETURN(indices.Reserve(n), "reserve");
        for (int64_t i = 0; i < n; ++i) {
          if (u.child_id(i) == c) {
            indices.UnsafeAppend(dense ? static_cast<const arrow::DenseUnionArray&>(u).value_offset(i) : i + u.offset());
          } else {
            indices.UnsafeAppendNull();
          }
        }
        ArrayPtr index_array;
        OG_ARROW_RETURN(indices.Finish(&index_array), "finish");
        OG_ARROW_ASSIGN(arrow::Datum taken, arrow::compute::Take(u.field(c), index_array), "take");
        OG_ASSIGN_OR_RETURN(ArrayPtr child, UnionsToStructs(taken.make_array()));
        children.push_back(child);
      }
      return MakeArr<arrow::StructArray>(target, n, children);
    }
    if (id == arrow::Type::STRUCT) {
      const auto& s = static_cast<const arrow::StructArray&>(*array);
      std::vector<ArrayPtr> children;
      for (int f = 0; f < s.num_fields(); ++f) {
        OG_ASSIGN_OR_RETURN(ArrayPtr child, UnionsToStructs(s.field(f)));
        children.push_back(child);
      }
      OG_ASSIGN_OR_RETURN(auto bitmap, ZeroOffsetBitmap(s));
      return MakeArr<arrow::StructArray>(target, s.length(), children, bitmap, s.null_count());
    }
    if (id == arrow::Type::LIST) {
      const auto& l = static_cast<const arrow::ListArray&>(*array);
      OG_ASSIGN_OR_RETURN(ArrayPtr values, UnionsToStructs(l.values()));
      return MakeArr<arrow::ListArray>(target, l.length(), l.value_offsets(), values,
                                                l.null_bitmap(), l.null_count(), l.offset());
    }
    if (id == arrow::Type::LARGE_LIST) {
      const auto& l = static_cast<const arrow::LargeListArray&>(*array);
      OG_ASSIGN_OR_RETURN(ArrayPtr values, UnionsToStructs(l.values()));
      return MakeArr<arrow::LargeListArray>(target, l.length(), l.value_offsets(), values,
                                                     l.null_bitmap(), l.null_count(), l.offset());
    }
    // Maps holding unions: the cast rebuilds them by field.
    return GlueCast(array, target);
  } catch (const std::exception& e) {
    return Status::Internal(std::string("union conversion failed: ") + e.what());
  }
}

}  // namespace openglue::engine
