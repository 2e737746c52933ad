#include "catalog/partition_filter.h"

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <utility>

#include "common/strings.h"

namespace openglue::catalog {

// The types the compiled tree is made of. They cannot live in an anonymous namespace because
// PartitionFilter::Node (external linkage) holds them; a named namespace keeps them from
// colliding with other files of the module.
namespace partition_filter_internal {

// ---------------------------------------------------------------------------------------------
// Key types and typed values
// ---------------------------------------------------------------------------------------------

enum class KeyKind { kString, kInteger, kDecimal, kDate, kTimestamp, kUnsupported };

enum class CompareOp { kEq, kNe, kLt, kLe, kGt, kGe };

// A value converted to a key's type, borrowing its bytes. Which members mean something depends
// on the KeyKind:
//   kString     text = the bytes
//   kInteger    number
//   kDecimal    negative, text = integer digits without leading zeros, frac = fraction digits
//               without trailing zeros (zero is non-negative with both empty)
//   kDate       number = year * 10000 + month * 100 + day
//   kTimestamp  number = date number * 86400 + second of the day, nanos
// The date and timestamp numbers are not day counts, but they order exactly as the calendar does,
// which is all comparison needs.
struct ScalarView {
  int64_t number = 0;
  int32_t nanos = 0;
  bool negative = false;
  std::string_view text;
  std::string_view frac;
};

// A literal converted once, in Make: owns its bytes.
struct Scalar {
  int64_t number = 0;
  int32_t nanos = 0;
  bool negative = false;
  std::string text;
  std::string frac;
  std::string canonical;  // CanonicalPartitionValue of the literal, for RequiredEqualities

  ScalarView View() const { return ScalarView{number, nanos, negative, text, frac}; }
};

// One step of a compiled LIKE pattern.
struct LikeStep {
  enum class Kind : uint8_t { kByte, kOneChar, kAnyRun };
  Kind kind;
  char byte;
};

enum class NodeKind { kAnd, kOr, kNot, kCompare, kBetween, kIn, kLike, kIsNull };

}  // namespace partition_filter_internal

using partition_filter_internal::CompareOp;
using partition_filter_internal::KeyKind;
using partition_filter_internal::LikeStep;
using partition_filter_internal::NodeKind;
using partition_filter_internal::Scalar;
using partition_filter_internal::ScalarView;

struct PartitionFilter::Node {
  NodeKind kind = NodeKind::kAnd;
  std::vector<Node> children;  // kAnd, kOr (two or more), kNot (one)
  size_t key = 0;              // predicates: the key position
  KeyKind key_kind = KeyKind::kString;
  CompareOp op = CompareOp::kEq;  // kCompare: `key op values[0]`
  std::vector<Scalar> values;     // kCompare: 1; kBetween: low, high; kIn: sorted, unique
  std::vector<LikeStep> like;     // kLike
};

namespace {

using Node = PartitionFilter::Node;

constexpr size_t kMaxQuotedBytes = 64;

bool IsDigit(char c) { return c >= '0' && c <= '9'; }
bool IsSpace(char c) {
  return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v';
}
bool IsIdentStart(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_';
}
bool IsIdentChar(char c) { return IsIdentStart(c) || IsDigit(c); }
char LowerAscii(char c) { return (c >= 'A' && c <= 'Z') ? static_cast<char>(c - 'A' + 'a') : c; }

std::string Lower(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = LowerAscii(c);
  return out;
}

// Length of the valid UTF-8 sequence starting at s[i], or 0 if there is none (the strict rules:
// no overlong forms, no surrogates, nothing above U+10FFFF).
size_t Utf8SequenceLength(std::string_view s, size_t i) {
  auto byte = [&](size_t k) -> int {
    return k < s.size() ? static_cast<unsigned char>(s[k]) : -1;
  };
  auto cont = [&](size_t k, int lo, int hi) {
    int b = byte(k);
    return b >= lo && b <= hi;
  };
  int b0 = byte(i);
  if (b0 < 0) return 0;
  if (b0 < 0x80) return 1;
  if (b0 >= 0xC2 && b0 <= 0xDF) return cont(i + 1, 0x80, 0xBF) ? 2 : 0;
  if (b0 >= 0xE0 && b0 <= 0xEF) {
    int lo = b0 == 0xE0 ? 0xA0 : 0x80;
    int hi = b0 == 0xED ? 0x9F : 0xBF;
    return cont(i + 1, lo, hi) && cont(i + 2, 0x80, 0xBF) ? 3 : 0;
  }
  if (b0 >= 0xF0 && b0 <= 0xF4) {
    int lo = b0 == 0xF0 ? 0x90 : 0x80;
    int hi = b0 == 0xF4 ? 0x8F : 0xBF;
    return cont(i + 1, lo, hi) && cont(i + 2, 0x80, 0xBF) && cont(i + 3, 0x80, 0xBF) ? 4 : 0;
  }
  return 0;
}

// User text quoted for an error message. The message travels into a JSON response and logs,
// so control characters and bytes that are not valid UTF-8 are escaped
// (EscapeControlCharacters), and text longer than kMaxQuotedBytes is cut on a character start.
std::string Quote(std::string_view s) {
  size_t end = std::min(s.size(), kMaxQuotedBytes);
  // A character has at most three continuation bytes.
  for (int k = 0; k < 3 && end < s.size() && (static_cast<unsigned char>(s[end]) & 0xC0) == 0x80; ++k) ++end;
  return "'" + EscapeControlCharacters(s.substr(0, end)) + (end < s.size() ? "..." : "") + "'";
}

// Recognises Glue column types, ignoring case and whitespace: "VarChar(10)", "decimal(10, 2)".
KeyKind ClassifyType(std::string_view type) {
  std::string t;
  for (char c : type) {
    if (!IsSpace(c)) t.push_back(LowerAscii(c));
  }
  std::string_view base = t;
  bool has_args = false;
  size_t paren = t.find('(');
  if (paren != std::string::npos) {
    if (t.back() != ')' || paren + 2 > t.size() - 1) return KeyKind::kUnsupported;
    std::string_view args = std::string_view(t).substr(paren + 1, t.size() - paren - 2);
    for (char c : args) {
      if (!IsDigit(c) && c != ',') return KeyKind::kUnsupported;
    }
    base = std::string_view(t).substr(0, paren);
    has_args = true;
  }
  if (base == "char" || base == "varchar") return KeyKind::kString;
  if (base == "decimal") return KeyKind::kDecimal;
  if (has_args) return KeyKind::kUnsupported;
  if (base == "string") return KeyKind::kString;
  if (base == "int" || base == "integer" || base == "bigint" || base == "long" ||
      base == "smallint" || base == "tinyint") {
    return KeyKind::kInteger;
  }
  if (base == "date") return KeyKind::kDate;
  if (base == "timestamp") return KeyKind::kTimestamp;
  return KeyKind::kUnsupported;
}

// [+-]digits, within int64.
bool ParseInteger(std::string_view s, int64_t* out) {
  size_t i = 0;
  bool negative = false;
  if (i < s.size() && (s[i] == '+' || s[i] == '-')) {
    negative = s[i] == '-';
    ++i;
  }
  if (i == s.size()) return false;
  const uint64_t limit = negative ? (uint64_t{1} << 63) : static_cast<uint64_t>(INT64_MAX);
  uint64_t magnitude = 0;
  for (; i < s.size(); ++i) {
    if (!IsDigit(s[i])) return false;
    uint64_t digit = static_cast<uint64_t>(s[i] - '0');
    if (magnitude > (limit - digit) / 10) return false;
    magnitude = magnitude * 10 + digit;
  }
  // Modular conversion (well defined since C++20) also covers INT64_MIN.
  *out = negative ? static_cast<int64_t>(~magnitude + 1) : static_cast<int64_t>(magnitude);
  return true;
}

// Exponents beyond this make a decimal that no partition value needs; they do not convert
// (and bound the digits an exponent can make us write).
constexpr int kMaxDecimalExponent = 400;

// [+-] digits [. digits] [(e|E) [+-] digits], at least one mantissa digit; "5." and ".5" are
// accepted, and so is the exponent form "3e10" / "2.5E-3" (exactly: 30000000000, 0.0025).
// With an exponent, `out` views a thread-local buffer that the next call reuses: callers use a
// view before parsing another value.
bool ParseDecimal(std::string_view s, ScalarView* out) {
  size_t i = 0;
  bool negative = false;
  if (i < s.size() && (s[i] == '+' || s[i] == '-')) {
    negative = s[i] == '-';
    ++i;
  }
  size_t int_begin = i;
  while (i < s.size() && IsDigit(s[i])) ++i;
  size_t int_end = i;
  size_t frac_begin = i, frac_end = i;
  if (i < s.size() && s[i] == '.') {
    ++i;
    frac_begin = i;
    while (i < s.size() && IsDigit(s[i])) ++i;
    frac_end = i;
  }
  if (int_begin == int_end && frac_begin == frac_end) return false;
  std::string_view text = s.substr(int_begin, int_end - int_begin);
  std::string_view frac = s.substr(frac_begin, frac_end - frac_begin);
  if (i < s.size() && (s[i] == 'e' || s[i] == 'E')) {
    ++i;
    bool exponent_negative = false;
    if (i < s.size() && (s[i] == '+' || s[i] == '-')) {
      exponent_negative = s[i] == '-';
      ++i;
    }
    if (i == s.size()) return false;
    int exponent = 0;
    for (; i < s.size(); ++i) {
      if (!IsDigit(s[i])) return false;
      exponent = exponent * 10 + (s[i] - '0');
      if (exponent > kMaxDecimalExponent) return false;
    }
    if (exponent_negative) exponent = -exponent;
    // Move the decimal point: all mantissa digits, the point after text.size() + exponent.
    thread_local std::string buffer;
    buffer.assign(text);
    buffer.append(frac);
    int64_t point = static_cast<int64_t>(text.size()) + exponent;
    if (point < 0) {
      buffer.insert(0, static_cast<size_t>(-point), '0');
      point = 0;
    } else if (point > static_cast<int64_t>(buffer.size())) {
      buffer.append(static_cast<size_t>(point) - buffer.size(), '0');
    }
    std::string_view digits = buffer;
    text = digits.substr(0, static_cast<size_t>(point));
    frac = digits.substr(static_cast<size_t>(point));
  }
  if (i != s.size()) return false;
  while (!text.empty() && text.front() == '0') text.remove_prefix(1);
  while (!frac.empty() && frac.back() == '0') frac.remove_suffix(1);
  out->text = text;
  out->frac = frac;
  out->negative = negative && !(out->text.empty() && out->frac.empty());
  return true;
}

int Sign(int c) { return (c > 0) - (c < 0); }

int CompareDecimal(const ScalarView& a, const ScalarView& b) {
  if (a.negative != b.negative) return a.negative ? -1 : 1;
  int magnitude;
  if (a.text.size() != b.text.size()) {
    magnitude = a.text.size() < b.text.size() ? -1 : 1;
  } else if (int c = a.text.compare(b.text); c != 0) {
    magnitude = Sign(c);
  } else {
    // Fractions without trailing zeros order as plain strings: "5" (.5) < "51" (.51).
    magnitude = Sign(a.frac.compare(b.frac));
  }
  return a.negative ? -magnitude : magnitude;
}

struct DateTime {
  int year = 0, month = 0, day = 0, hour = 0, minute = 0, second = 0;
  int32_t nanos = 0;
};

// Reads min_digits..max_digits decimal digits at *pos.
bool ReadDigits(std::string_view s, size_t* pos, int min_digits, int max_digits, int* out) {
  int value = 0, count = 0;
  while (*pos < s.size() && count < max_digits && IsDigit(s[*pos])) {
    value = value * 10 + (s[*pos] - '0');
    ++*pos;
    ++count;
  }
  *out = value;
  return count >= min_digits;
}

bool Expect(std::string_view s, size_t* pos, char c) {
  if (*pos < s.size() && s[*pos] == c) {
    ++*pos;
    return true;
  }
  return false;
}

int DaysInMonth(int year, int month) {
  static constexpr int kDays[] = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
  bool leap = (year % 4 == 0 && year % 100 != 0) || year % 400 == 0;
  return month == 2 && leap ? 29 : kDays[month - 1];
}

// YYYY-M[M]-D[D]
bool ParseDatePart(std::string_view s, size_t* pos, DateTime* dt) {
  if (!ReadDigits(s, pos, 4, 4, &dt->year) || !Expect(s, pos, '-') ||
      !ReadDigits(s, pos, 1, 2, &dt->month) || !Expect(s, pos, '-') ||
      !ReadDigits(s, pos, 1, 2, &dt->day)) {
    return false;
  }
  // A fifth year digit or a third month digit would otherwise be read as the next field.
  if (*pos < s.size() && IsDigit(s[*pos])) return false;
  return dt->month >= 1 && dt->month <= 12 && dt->day >= 1 &&
         dt->day <= DaysInMonth(dt->year, dt->month);
}

bool ParseDate(std::string_view s, DateTime* dt) {
  size_t pos = 0;
  return ParseDatePart(s, &pos, dt) && pos == s.size();
}

// date [(' ' | 'T') H[H]:M[M][:S[S][.fraction up to 9 digits]]]. With `require_time` (literals
// in an expression) the time part must be there: '2022-02-01' is a date, not a timestamp.
bool ParseTimestamp(std::string_view s, DateTime* dt, bool require_time = false) {
  size_t pos = 0;
  if (!ParseDatePart(s, &pos, dt)) return false;
  if (pos == s.size()) return !require_time;
  if (s[pos] != ' ' && s[pos] != 'T') return false;
  ++pos;
  if (!ReadDigits(s, &pos, 1, 2, &dt->hour) || !Expect(s, &pos, ':') ||
      !ReadDigits(s, &pos, 1, 2, &dt->minute)) {
    return false;
  }
  if (Expect(s, &pos, ':')) {
    if (!ReadDigits(s, &pos, 1, 2, &dt->second)) return false;
    if (Expect(s, &pos, '.')) {
      int digits = 0;
      int32_t nanos = 0;
      while (pos < s.size() && IsDigit(s[pos]) && digits < 9) {
        nanos = nanos * 10 + (s[pos] - '0');
        ++pos;
        ++digits;
      }
      if (digits == 0) return false;
      for (int k = digits; k < 9; ++k) nanos *= 10;
      dt->nanos = nanos;
    }
  }
  return pos == s.size() && dt->hour <= 23 && dt->minute <= 59 && dt->second <= 59;
}

int64_t DateNumber(const DateTime& dt) { return dt.year * 10000 + dt.month * 100 + dt.day; }

// Converts `s` to a value of `kind`; false when it does not convert. `out` borrows from `s`
// (or from ParseDecimal's buffer). `literal`: `s` is a literal of an expression, which must
// spell a timestamp in full.
bool ParseValue(KeyKind kind, std::string_view s, ScalarView* out, bool literal = false) {
  switch (kind) {
    case KeyKind::kString:
      out->text = s;
      return true;
    case KeyKind::kInteger:
      return ParseInteger(s, &out->number);
    case KeyKind::kDecimal:
      return ParseDecimal(s, out);
    case KeyKind::kDate: {
      DateTime dt;
      if (!ParseDate(s, &dt)) return false;
      out->number = DateNumber(dt);
      return true;
    }
    case KeyKind::kTimestamp: {
      DateTime dt;
      if (!ParseTimestamp(s, &dt, literal)) return false;
      out->number = DateNumber(dt) * 86400 + dt.hour * 3600 + dt.minute * 60 + dt.second;
      out->nanos = dt.nanos;
      return true;
    }
    case KeyKind::kUnsupported:
      return false;
  }
  return false;
}

int Compare(KeyKind kind, const ScalarView& a, const ScalarView& b) {
  switch (kind) {
    case KeyKind::kString:
      return Sign(a.text.compare(b.text));  // bytewise, as unsigned chars
    case KeyKind::kDecimal:
      return CompareDecimal(a, b);
    case KeyKind::kTimestamp:
      if (a.number != b.number) return a.number < b.number ? -1 : 1;
      return (a.nanos > b.nanos) - (a.nanos < b.nanos);
    case KeyKind::kInteger:
    case KeyKind::kDate:
    case KeyKind::kUnsupported:
      return (a.number > b.number) - (a.number < b.number);
  }
  return 0;
}

std::string Canonical(KeyKind kind, const ScalarView& v) {
  char buf[64];
  switch (kind) {
    case KeyKind::kInteger:
      return std::to_string(v.number);
    case KeyKind::kDecimal: {
      std::string out = v.negative ? "-" : "";
      out += v.text.empty() ? std::string_view("0") : v.text;
      if (!v.frac.empty()) {
        out += '.';
        out += v.frac;
      }
      return out;
    }
    case KeyKind::kDate:
      std::snprintf(buf, sizeof(buf), "%04d-%02d-%02d", static_cast<int>(v.number / 10000),
                    static_cast<int>(v.number / 100 % 100), static_cast<int>(v.number % 100));
      return buf;
    case KeyKind::kTimestamp: {
      int64_t date = v.number / 86400;
      int64_t second_of_day = v.number % 86400;
      std::snprintf(buf, sizeof(buf), "%04d-%02d-%02d %02d:%02d:%02d",
                    static_cast<int>(date / 10000), static_cast<int>(date / 100 % 100),
                    static_cast<int>(date % 100), static_cast<int>(second_of_day / 3600),
                    static_cast<int>(second_of_day / 60 % 60),
                    static_cast<int>(second_of_day % 60));
      std::string out = buf;
      if (v.nanos != 0) {
        std::snprintf(buf, sizeof(buf), ".%09d", static_cast<int>(v.nanos));
        std::string fraction = buf;
        while (fraction.back() == '0') fraction.pop_back();
        out += fraction;
      }
      return out;
    }
    case KeyKind::kString:
    case KeyKind::kUnsupported:
      return std::string(v.text);
  }
  return std::string(v.text);
}

// Advances past one UTF-8 character (a lead byte and its continuation bytes); a stray byte
// counts as one character, so arbitrary bytes never stall or overrun.
size_t NextChar(std::string_view s, size_t i) {
  ++i;
  while (i < s.size() && (static_cast<unsigned char>(s[i]) & 0xC0) == 0x80) ++i;
  return i;
}

// Wildcard matching with backtracking to the most recent '%': O(n*m) worst case, no allocation.
bool LikeMatches(const std::vector<LikeStep>& steps, std::string_view s) {
  constexpr size_t kNone = static_cast<size_t>(-1);
  const size_t m = steps.size();
  size_t p = 0, i = 0;
  size_t star = kNone, star_i = 0;
  while (i < s.size()) {
    if (p < m) {
      const LikeStep& step = steps[p];
      if (step.kind == LikeStep::Kind::kAnyRun) {
        star = p++;
        star_i = i;
        continue;
      }
      if (step.kind == LikeStep::Kind::kOneChar) {
        i = NextChar(s, i);
        ++p;
        continue;
      }
      if (step.byte == s[i]) {
        ++i;
        ++p;
        continue;
      }
    }
    if (star == kNone) return false;
    p = star + 1;
    star_i = NextChar(s, star_i);
    i = star_i;
  }
  while (p < m && steps[p].kind == LikeStep::Kind::kAnyRun) ++p;
  return p == m;
}

// ---------------------------------------------------------------------------------------------
// Evaluation (three-valued)
// ---------------------------------------------------------------------------------------------

enum class Truth : uint8_t { kFalse, kTrue, kUnknown };

Truth FromBool(bool b) { return b ? Truth::kTrue : Truth::kFalse; }

bool ApplyOp(CompareOp op, int c) {
  switch (op) {
    case CompareOp::kEq: return c == 0;
    case CompareOp::kNe: return c != 0;
    case CompareOp::kLt: return c < 0;
    case CompareOp::kLe: return c <= 0;
    case CompareOp::kGt: return c > 0;
    case CompareOp::kGe: return c >= 0;
  }
  return false;
}

Truth EvaluatePredicate(const Node& node, std::string_view raw) {
  if (node.kind == NodeKind::kIsNull) return FromBool(raw == kHiveNullPartitionValue);
  if (raw == kHiveNullPartitionValue) return Truth::kUnknown;
  if (node.kind == NodeKind::kLike) return FromBool(LikeMatches(node.like, raw));
  ScalarView value;
  if (!ParseValue(node.key_kind, raw, &value)) return Truth::kUnknown;
  switch (node.kind) {
    case NodeKind::kCompare:
      return FromBool(ApplyOp(node.op, Compare(node.key_kind, value, node.values[0].View())));
    case NodeKind::kBetween:
      return FromBool(Compare(node.key_kind, value, node.values[0].View()) >= 0 &&
                      Compare(node.key_kind, value, node.values[1].View()) <= 0);
    case NodeKind::kIn: {
      auto it = std::lower_bound(node.values.begin(), node.values.end(), value,
                                 [&](const Scalar& a, const ScalarView& b) {
                                   return Compare(node.key_kind, a.View(), b) < 0;
                                 });
      return FromBool(it != node.values.end() && Compare(node.key_kind, it->View(), value) == 0);
    }
    default:
      return Truth::kFalse;
  }
}

Truth Evaluate(const Node& node, const std::vector<std::string_view>& values) {
  switch (node.kind) {
    case NodeKind::kAnd: {
      Truth result = Truth::kTrue;
      for (const Node& child : node.children) {
        Truth t = Evaluate(child, values);
        if (t == Truth::kFalse) return Truth::kFalse;
        if (t == Truth::kUnknown) result = Truth::kUnknown;
      }
      return result;
    }
    case NodeKind::kOr: {
      Truth result = Truth::kFalse;
      for (const Node& child : node.children) {
        Truth t = Evaluate(child, values);
        if (t == Truth::kTrue) return Truth::kTrue;
        if (t == Truth::kUnknown) result = Truth::kUnknown;
      }
      return result;
    }
    case NodeKind::kNot: {
      Truth t = Evaluate(node.children[0], values);
      if (t == Truth::kUnknown) return t;
      return t == Truth::kTrue ? Truth::kFalse : Truth::kTrue;
    }
    default:
      return EvaluatePredicate(node, values[node.key]);
  }
}

// ---------------------------------------------------------------------------------------------
// Tokenizer
// ---------------------------------------------------------------------------------------------

enum class TokenKind {
  kEnd,
  kIdentifier,        // bare word: a key name or a keyword
  kQuotedIdentifier,  // `name` or "name"
  kString,            // 'text', unescaped
  kNumber,            // (digits [. digits] | . digits) [(e|E) [+-] digits]
  kOperator,          // a comparison operator
  kLeftParen,
  kRightParen,
  kComma,
  kMinus,
  kPlus,
};

struct Token {
  TokenKind kind = TokenKind::kEnd;
  std::string text;  // identifiers: as written; strings: unescaped content; numbers: as written
  size_t pos = 0;    // byte offset of the first character
  size_t end = 0;    // byte offset past the last character
  CompareOp op = CompareOp::kEq;
};

Status SyntaxError(size_t pos, std::string_view what) {
  return Status::InvalidInput("Syntax error at position " + std::to_string(pos + 1) +
                              " in expression: " + std::string(what));
}

Result<std::vector<Token>> Tokenize(std::string_view s) {
  std::vector<Token> tokens;
  size_t i = 0;
  while (true) {
    while (i < s.size() && IsSpace(s[i])) ++i;
    Token t;
    t.pos = i;
    if (i == s.size()) {
      t.end = i;
      tokens.push_back(std::move(t));
      return tokens;
    }
    char c = s[i];
    if (IsIdentStart(c)) {
      while (i < s.size() && IsIdentChar(s[i])) ++i;
      t.kind = TokenKind::kIdentifier;
      t.text = std::string(s.substr(t.pos, i - t.pos));
    } else if (IsDigit(c) || (c == '.' && i + 1 < s.size() && IsDigit(s[i + 1]))) {
      while (i < s.size() && IsDigit(s[i])) ++i;
      if (i < s.size() && s[i] == '.') {
        ++i;
        while (i < s.size() && IsDigit(s[i])) ++i;
      }
      // An exponent: e10, E-3, e+2.
      if (i < s.size() && (s[i] == 'e' || s[i] == 'E')) {
        size_t j = i + 1;
        if (j < s.size() && (s[j] == '+' || s[j] == '-')) ++j;
        if (j < s.size() && IsDigit(s[j])) {
          while (j < s.size() && IsDigit(s[j])) ++j;
          i = j;
        }
      }
      t.kind = TokenKind::kNumber;
      t.text = std::string(s.substr(t.pos, i - t.pos));
    } else if (c == '\'' || c == '`' || c == '"') {
      // The quote character doubled stands for itself.
      t.kind = c == '\'' ? TokenKind::kString : TokenKind::kQuotedIdentifier;
      ++i;
      bool closed = false;
      while (i < s.size()) {
        if (s[i] == c) {
          if (i + 1 < s.size() && s[i + 1] == c) {
            t.text.push_back(c);
            i += 2;
            continue;
          }
          ++i;
          closed = true;
          break;
        }
        t.text.push_back(s[i++]);
      }
      if (!closed) {
        return SyntaxError(t.pos, c == '\'' ? "unterminated string literal (missing closing ')"
                                            : std::string("unterminated quoted partition key "
                                                          "name (missing closing ") +
                                                  c + ")");
      }
      if (t.kind == TokenKind::kQuotedIdentifier && t.text.empty()) {
        return SyntaxError(t.pos, "empty quoted partition key name");
      }
    } else if (c == '=') {
      ++i;
      t.kind = TokenKind::kOperator;
      t.op = CompareOp::kEq;
    } else if (c == '!') {
      if (i + 1 < s.size() && s[i + 1] == '=') {
        i += 2;
        t.kind = TokenKind::kOperator;
        t.op = CompareOp::kNe;
      } else {
        return SyntaxError(i, "unexpected character '!' (did you mean '!='?)");
      }
    } else if (c == '<') {
      ++i;
      t.kind = TokenKind::kOperator;
      t.op = CompareOp::kLt;
      if (i < s.size() && s[i] == '=') {
        ++i;
        t.op = CompareOp::kLe;
      } else {
        // "<>", and "< >" as the Glue documentation prints it.
        size_t j = i;
        while (j < s.size() && IsSpace(s[j])) ++j;
        if (j < s.size() && s[j] == '>') {
          i = j + 1;
          t.op = CompareOp::kNe;
        }
      }
    } else if (c == '>') {
      ++i;
      t.kind = TokenKind::kOperator;
      t.op = CompareOp::kGt;
      if (i < s.size() && s[i] == '=') {
        ++i;
        t.op = CompareOp::kGe;
      }
    } else if (c == '(' || c == ')' || c == ',' || c == '-' || c == '+') {
      ++i;
      t.kind = c == '(' ? TokenKind::kLeftParen
               : c == ')' ? TokenKind::kRightParen
               : c == ',' ? TokenKind::kComma
               : c == '-' ? TokenKind::kMinus
                          : TokenKind::kPlus;
    } else {
      size_t len = std::max<size_t>(1, Utf8SequenceLength(s, i));
      return SyntaxError(i, "unexpected character " + Quote(s.substr(i, len)));
    }
    t.end = i;
    tokens.push_back(std::move(t));
  }
}

// ---------------------------------------------------------------------------------------------
// Parser
// ---------------------------------------------------------------------------------------------

struct KeyInfo {
  std::string name;  // as declared
  std::string type;  // as declared
  std::string lower_name;
  KeyKind kind;
};

struct Literal {
  std::string text;
  size_t pos = 0;
};

// One side of a comparison: a key or a literal.
struct Operand {
  bool is_key = false;
  size_t key = 0;
  Literal literal;
};

// `a op b` is `b Mirror(op) a`.
CompareOp Mirror(CompareOp op) {
  switch (op) {
    case CompareOp::kLt: return CompareOp::kGt;
    case CompareOp::kLe: return CompareOp::kGe;
    case CompareOp::kGt: return CompareOp::kLt;
    case CompareOp::kGe: return CompareOp::kLe;
    default: return op;
  }
}

bool IsReservedWord(std::string_view lower) {
  return lower == "and" || lower == "or" || lower == "not" || lower == "in" ||
         lower == "between" || lower == "like" || lower == "is" || lower == "null" ||
         lower == "escape";
}

Node MakeNot(Node inner) {
  // NOT NOT x is x under three-valued logic too.
  if (inner.kind == NodeKind::kNot) return std::move(inner.children[0]);
  Node n;
  n.kind = NodeKind::kNot;
  n.children.push_back(std::move(inner));
  return n;
}

// Appends `child` to the AND/OR node `parent`, splicing a child of the same kind so that
// chains stay flat (and evaluation recursion stays shallow).
void AppendFlattened(Node* parent, Node child) {
  if (child.kind == parent->kind) {
    for (Node& grandchild : child.children) parent->children.push_back(std::move(grandchild));
  } else {
    parent->children.push_back(std::move(child));
  }
}

class Parser {
 public:
  Parser(std::string_view expression, const std::vector<KeyInfo>& keys,
         std::vector<Token> tokens)
      : expression_(expression), keys_(keys), tokens_(std::move(tokens)) {}

  Result<Node> ParseExpression() {
    OG_ASSIGN_OR_RETURN(Node root, ParseOr(0));
    const Token& t = Peek();
    if (t.kind == TokenKind::kEnd) return root;
    if (t.kind == TokenKind::kRightParen) {
      return SyntaxError(t.pos, "unexpected ')' without a matching '('");
    }
    return SyntaxError(t.pos, "unexpected " + Describe(t) +
                                  " after a complete condition; expected AND, OR or the end "
                                  "of the expression");
  }

 private:
  const Token& Peek(size_t ahead = 0) const {
    size_t k = std::min(next_ + ahead, tokens_.size() - 1);  // the last token is kEnd
    return tokens_[k];
  }
  const Token& Advance() {
    const Token& t = Peek();
    if (next_ < tokens_.size() - 1) ++next_;
    return t;
  }
  static bool IsKeyword(const Token& t, std::string_view lower) {
    if (t.kind != TokenKind::kIdentifier || t.text.size() != lower.size()) return false;
    for (size_t k = 0; k < lower.size(); ++k) {
      if (LowerAscii(t.text[k]) != lower[k]) return false;
    }
    return true;
  }
  bool AcceptKeyword(std::string_view lower) {
    if (!IsKeyword(Peek(), lower)) return false;
    Advance();
    return true;
  }

  // The token as the user wrote it, quoted.
  std::string Source(const Token& t) const {
    return Quote(expression_.substr(t.pos, t.end - t.pos));
  }
  std::string Describe(const Token& t) const {
    if (t.kind == TokenKind::kEnd) return "end of expression";
    return Source(t);
  }
  Status Expected(std::string_view what) const {
    const Token& t = Peek();
    return SyntaxError(t.pos, std::string(what) + ", found " + Describe(t));
  }

  Status DepthError(size_t pos) const {
    return SyntaxError(pos, "parentheses and NOT are nested more than " +
                                std::to_string(PartitionFilter::kMaxNestingDepth) +
                                " levels deep");
  }

  Result<Node> ParseOr(int depth) {
    OG_ASSIGN_OR_RETURN(Node first, ParseAnd(depth));
    if (!IsKeyword(Peek(), "or")) return first;
    Node node;
    node.kind = NodeKind::kOr;
    AppendFlattened(&node, std::move(first));
    while (AcceptKeyword("or")) {
      OG_ASSIGN_OR_RETURN(Node next, ParseAnd(depth));
      AppendFlattened(&node, std::move(next));
    }
    return node;
  }

  Result<Node> ParseAnd(int depth) {
    OG_ASSIGN_OR_RETURN(Node first, ParseNot(depth));
    if (!IsKeyword(Peek(), "and")) return first;
    Node node;
    node.kind = NodeKind::kAnd;
    AppendFlattened(&node, std::move(first));
    while (AcceptKeyword("and")) {
      OG_ASSIGN_OR_RETURN(Node next, ParseNot(depth));
      AppendFlattened(&node, std::move(next));
    }
    return node;
  }

  Result<Node> ParseNot(int depth) {
    if (IsKeyword(Peek(), "not")) {
      if (depth >= PartitionFilter::kMaxNestingDepth) return DepthError(Peek().pos);
      Advance();
      OG_ASSIGN_OR_RETURN(Node inner, ParseNot(depth + 1));
      return MakeNot(std::move(inner));
    }
    if (Peek().kind == TokenKind::kLeftParen && !StartsWrappedOperand()) {
      if (depth >= PartitionFilter::kMaxNestingDepth) return DepthError(Peek().pos);
      size_t open = Advance().pos;
      OG_ASSIGN_OR_RETURN(Node inner, ParseOr(depth + 1));
      if (Peek().kind != TokenKind::kRightParen) {
        return Expected("expected ')' to close the '(' at position " + std::to_string(open + 1));
      }
      Advance();
      return inner;
    }
    return ParsePredicate();
  }

  // Tokens of one bare operand starting at token index `at` (a key, or a literal with its sign
  // or DATE/TIMESTAMP prefix), or 0 when none starts there.
  size_t OperandLength(size_t at) const {
    const Token& t = tokens_[std::min(at, tokens_.size() - 1)];
    const Token& next = tokens_[std::min(at + 1, tokens_.size() - 1)];
    switch (t.kind) {
      case TokenKind::kString:
      case TokenKind::kNumber:
      case TokenKind::kQuotedIdentifier:
        return 1;
      case TokenKind::kMinus:
      case TokenKind::kPlus:
        return next.kind == TokenKind::kNumber ? 2 : 0;
      case TokenKind::kIdentifier:
        if ((IsKeyword(t, "date") || IsKeyword(t, "timestamp")) && next.kind == TokenKind::kString)
          return 2;
        return IsReservedWord(Lower(t.text)) ? 0 : 1;
      default:
        return 0;
    }
  }

  // Whether the '(' at the current token starts a parenthesised operand, `((key)) = (2)`, rather
  // than a parenthesised condition: n '(' then one operand then at least n ')'. With fewer ')'
  // the outer '(' group a condition (`((key) = 2)`) and are parsed as such first.
  bool StartsWrappedOperand() const {
    size_t at = next_;
    size_t opens = 0;
    while (at < tokens_.size() && tokens_[at].kind == TokenKind::kLeftParen) ++at, ++opens;
    size_t length = OperandLength(at);
    if (length == 0) return false;
    at += length;
    size_t closes = 0;
    while (at < tokens_.size() && tokens_[at].kind == TokenKind::kRightParen && closes < opens)
      ++at, ++closes;
    return closes == opens;
  }

  // Consumes the '(' around an operand; returns how many.
  Result<size_t> OpenOperandParens() {
    size_t opens = 0;
    while (Peek().kind == TokenKind::kLeftParen) {
      if (opens >= static_cast<size_t>(PartitionFilter::kMaxNestingDepth)) return DepthError(Peek().pos);
      Advance();
      ++opens;
    }
    return opens;
  }
  Status CloseOperandParens(size_t opens) {
    for (size_t k = 0; k < opens; ++k) {
      if (Peek().kind != TokenKind::kRightParen)
        return Expected("expected ')' to close the parenthesised value");
      Advance();
    }
    return Status::OK();
  }

  Result<size_t> ResolveKey(const Token& t) const {
    std::string lower = Lower(t.text);
    for (size_t k = 0; k < keys_.size(); ++k) {
      if (keys_[k].lower_name != lower) continue;
      if (keys_[k].kind == KeyKind::kUnsupported) {
        return Status::InvalidInput(
            "Partition key " + Quote(keys_[k].name) + " has type " + keys_[k].type +
            ", which expressions cannot filter; supported types are string, char, varchar, "
            "date, timestamp, int, bigint, long, smallint, tinyint, decimal");
      }
      return k;
    }
    std::string message = "Unknown partition key " + Quote(t.text) + " in expression; ";
    if (keys_.empty()) {
      message += "the table has no partition keys";
    } else {
      message += "the table's partition keys are: ";
      for (size_t k = 0; k < keys_.size(); ++k) {
        if (k > 0) message += ", ";
        message += keys_[k].name;
      }
    }
    return Status::InvalidInput(std::move(message));
  }

  // A literal at the current token, or nullopt-like false when there is none (nothing consumed).
  // Fails only on a sign that is not followed by a number.
  Result<bool> TryParseLiteral(Literal* out) {
    const Token& t = Peek();
    if (t.kind == TokenKind::kString || t.kind == TokenKind::kNumber) {
      out->text = t.text;
      out->pos = t.pos;
      Advance();
      return true;
    }
    if (t.kind == TokenKind::kMinus || t.kind == TokenKind::kPlus) {
      const Token& number = Peek(1);
      if (number.kind != TokenKind::kNumber) {
        return SyntaxError(number.pos, "expected a number after " + Describe(t) + ", found " +
                                           Describe(number));
      }
      out->text = (t.kind == TokenKind::kMinus ? "-" : "") + number.text;
      out->pos = t.pos;
      Advance();
      Advance();
      return true;
    }
    // DATE '...' and TIMESTAMP '...': typed literals of standard SQL. The key's type decides the
    // conversion, so the prefix only documents intent. A key named date or timestamp still
    // works, because it is not followed by a string.
    if ((IsKeyword(t, "date") || IsKeyword(t, "timestamp")) &&
        Peek(1).kind == TokenKind::kString) {
      Advance();
      const Token& s = Advance();
      out->text = s.text;
      out->pos = s.pos;
      return true;
    }
    return false;
  }

  Result<Literal> ParseLiteral(std::string_view after_what) {
    Literal literal;
    OG_ASSIGN_OR_RETURN(size_t opens, OpenOperandParens());
    OG_ASSIGN_OR_RETURN(bool found, TryParseLiteral(&literal));
    if (found) {
      OG_RETURN_NOT_OK(CloseOperandParens(opens));
      return literal;
    }
    std::string what = "expected a value after " + std::string(after_what);
    if (IsKeyword(Peek(), "null")) {
      return SyntaxError(Peek().pos, what + ", found NULL (test for null partitions with "
                                            "'key IS NULL')");
    }
    return Expected(what);
  }

  // A key or a literal; `expected` describes what is missing when there is neither.
  Result<Operand> ParseOperand(std::string_view expected) {
    OG_ASSIGN_OR_RETURN(size_t opens, OpenOperandParens());
    OG_ASSIGN_OR_RETURN(Operand operand, ParseBareOperand(expected));
    OG_RETURN_NOT_OK(CloseOperandParens(opens));
    return operand;
  }

  Result<Operand> ParseBareOperand(std::string_view expected) {
    Operand operand;
    OG_ASSIGN_OR_RETURN(bool found, TryParseLiteral(&operand.literal));
    if (found) return operand;
    const Token& t = Peek();
    bool is_name = t.kind == TokenKind::kQuotedIdentifier ||
                   (t.kind == TokenKind::kIdentifier && !IsReservedWord(Lower(t.text)));
    if (!is_name) {
      if (IsKeyword(t, "null")) {
        return SyntaxError(t.pos, "NULL cannot be compared; test for null partitions with "
                                  "'key IS NULL'");
      }
      return Expected(expected);
    }
    OG_ASSIGN_OR_RETURN(operand.key, ResolveKey(t));
    operand.is_key = true;
    Advance();
    return operand;
  }

  Result<Scalar> Convert(size_t key, const Literal& literal) const {
    const KeyInfo& info = keys_[key];
    Scalar scalar;
    ScalarView view;
    bool converted = ParseValue(info.kind, literal.text, &view, /*literal=*/true);
    if (!converted && info.kind == KeyKind::kInteger) {
      // An integer written in exponent form (2e3): exact, and integral, or it does not convert.
      ScalarView decimal;
      if (ParseDecimal(literal.text, &decimal) && decimal.frac.empty()) {
        std::string digits = (decimal.negative ? "-" : "") +
                             (decimal.text.empty() ? std::string("0") : std::string(decimal.text));
        converted = ParseInteger(digits, &view.number);
      }
    }
    if (!converted) {
      std::string message = Quote(literal.text) + " is not a valid " + info.type +
                            " for partition key " + Quote(info.name);
      if (info.kind == KeyKind::kDate) {
        message += " (expected a quoted date 'YYYY-MM-DD')";
      } else if (info.kind == KeyKind::kTimestamp) {
        message += " (expected a quoted timestamp 'YYYY-MM-DD HH:MM:SS[.fffffffff]')";
      }
      return Status::InvalidInput(std::move(message));
    }
    scalar.number = view.number;
    scalar.nanos = view.nanos;
    scalar.negative = view.negative;
    scalar.text = std::string(view.text);
    scalar.frac = std::string(view.frac);
    scalar.canonical = Canonical(info.kind, view);
    return scalar;
  }

  Node MakePredicate(NodeKind kind, size_t key) const {
    Node node;
    node.kind = kind;
    node.key = key;
    node.key_kind = keys_[key].kind;
    return node;
  }

  Result<Node> ParseComparison(size_t key, CompareOp op, const Literal& literal) {
    Node node = MakePredicate(NodeKind::kCompare, key);
    node.op = op;
    OG_ASSIGN_OR_RETURN(Scalar value, Convert(key, literal));
    node.values.push_back(std::move(value));
    return node;
  }

  Result<Node> ParsePredicate() {
    OG_ASSIGN_OR_RETURN(Operand left, ParseOperand("expected a partition key or a value"));
    if (!left.is_key) {
      // `literal op key`, read as `key Mirror(op) literal`.
      if (Peek().kind != TokenKind::kOperator) {
        return Expected("expected a comparison operator (=, <>, !=, <, <=, >, >=) after the "
                        "value " + Quote(left.literal.text));
      }
      const Token& op_token = Advance();
      const CompareOp op = op_token.op;
      const Token& right_token = Peek();
      OG_ASSIGN_OR_RETURN(Operand right,
                       ParseOperand("expected a partition key after " + Source(op_token)));
      if (!right.is_key) {
        return SyntaxError(right_token.pos,
                           "a comparison needs a partition key on one side, but both sides of " +
                               Source(op_token) + " are values");
      }
      return ParseComparison(right.key, Mirror(op), left.literal);
    }

    const size_t key = left.key;
    const std::string& name = keys_[key].name;
    const Token& t = Peek();
    if (t.kind == TokenKind::kOperator) {
      const Token& op_token = Advance();
      const CompareOp op = op_token.op;
      const Token& right_token = Peek();
      OG_ASSIGN_OR_RETURN(Operand right, ParseOperand("expected a value after " + Source(op_token)));
      if (right.is_key) {
        return SyntaxError(right_token.pos, "cannot compare partition key " + Quote(name) +
                                                " with partition key " +
                                                Quote(keys_[right.key].name) +
                                                "; compare a partition key with a value");
      }
      return ParseComparison(key, op, right.literal);
    }
    if (AcceptKeyword("is")) {
      bool negated = AcceptKeyword("not");
      if (!AcceptKeyword("null")) return Expected(negated ? "expected NULL after IS NOT"
                                                          : "expected NULL after IS");
      Node node = MakePredicate(NodeKind::kIsNull, key);
      return negated ? MakeNot(std::move(node)) : std::move(node);
    }
    bool negated = false;
    if (AcceptKeyword("not")) {
      negated = true;
      if (!IsKeyword(Peek(), "between") && !IsKeyword(Peek(), "in") &&
          !IsKeyword(Peek(), "like")) {
        return Expected("expected BETWEEN, IN or LIKE after NOT");
      }
    }
    Node node;
    if (AcceptKeyword("between")) {
      OG_ASSIGN_OR_RETURN(node, ParseBetween(key));
    } else if (AcceptKeyword("in")) {
      OG_ASSIGN_OR_RETURN(node, ParseIn(key));
    } else if (IsKeyword(Peek(), "like")) {
      OG_ASSIGN_OR_RETURN(node, ParseLike(key));
    } else {
      return Expected("expected an operator (=, <>, !=, <, <=, >, >=, BETWEEN, IN, LIKE or IS) "
                      "after partition key " + Quote(name));
    }
    return negated ? MakeNot(std::move(node)) : std::move(node);
  }

  Result<Node> ParseBetween(size_t key) {
    Node node = MakePredicate(NodeKind::kBetween, key);
    OG_ASSIGN_OR_RETURN(Literal low, ParseLiteral("BETWEEN"));
    if (!AcceptKeyword("and")) return Expected("expected AND after the lower bound of BETWEEN");
    OG_ASSIGN_OR_RETURN(Literal high, ParseLiteral("BETWEEN ... AND"));
    OG_ASSIGN_OR_RETURN(Scalar low_value, Convert(key, low));
    OG_ASSIGN_OR_RETURN(Scalar high_value, Convert(key, high));
    node.values.push_back(std::move(low_value));
    node.values.push_back(std::move(high_value));
    return node;
  }

  Result<Node> ParseIn(size_t key) {
    Node node = MakePredicate(NodeKind::kIn, key);
    if (Peek().kind != TokenKind::kLeftParen) return Expected("expected '(' after IN");
    Advance();
    while (true) {
      OG_ASSIGN_OR_RETURN(Literal literal,
                       ParseLiteral(node.values.empty() ? "IN (" : "',' in the IN list"));
      OG_ASSIGN_OR_RETURN(Scalar value, Convert(key, literal));
      node.values.push_back(std::move(value));
      if (Peek().kind == TokenKind::kComma) {
        Advance();
        continue;
      }
      if (Peek().kind == TokenKind::kRightParen) {
        Advance();
        break;
      }
      return Expected("expected ',' or ')' in the IN list");
    }
    const KeyKind kind = node.key_kind;
    auto less = [kind](const Scalar& a, const Scalar& b) {
      return Compare(kind, a.View(), b.View()) < 0;
    };
    auto equal = [kind](const Scalar& a, const Scalar& b) {
      return Compare(kind, a.View(), b.View()) == 0;
    };
    std::stable_sort(node.values.begin(), node.values.end(), less);
    node.values.erase(std::unique(node.values.begin(), node.values.end(), equal),
                      node.values.end());
    return node;
  }

  Result<Node> ParseLike(size_t key) {
    const Token& like_token = Advance();
    const KeyInfo& info = keys_[key];
    if (info.kind != KeyKind::kString) {
      return Status::InvalidInput("LIKE applies only to string partition keys; partition key " +
                                  Quote(info.name) + " has type " + info.type);
    }
    if (Peek().kind != TokenKind::kString) {
      return Expected("expected a quoted pattern after LIKE");
    }
    std::string pattern = Advance().text;
    bool has_escape = false;
    char escape = 0;
    if (AcceptKeyword("escape")) {
      const Token& e = Peek();
      if (e.kind != TokenKind::kString || e.text.size() != 1) {
        return Expected("expected a quoted single character after ESCAPE");
      }
      has_escape = true;
      escape = e.text[0];
      Advance();
    }
    Node node = MakePredicate(NodeKind::kLike, key);
    for (size_t k = 0; k < pattern.size(); ++k) {
      char c = pattern[k];
      if (has_escape && c == escape) {
        if (k + 1 == pattern.size()) {
          return SyntaxError(like_token.pos,
                             "the LIKE pattern ends with its escape character " +
                                 Quote(std::string_view(&escape, 1)));
        }
        node.like.push_back({LikeStep::Kind::kByte, pattern[++k]});
      } else if (c == '%') {
        if (node.like.empty() || node.like.back().kind != LikeStep::Kind::kAnyRun) {
          node.like.push_back({LikeStep::Kind::kAnyRun, 0});
        }
      } else if (c == '_') {
        node.like.push_back({LikeStep::Kind::kOneChar, 0});
      } else {
        node.like.push_back({LikeStep::Kind::kByte, c});
      }
    }
    return node;
  }

  std::string_view expression_;
  const std::vector<KeyInfo>& keys_;
  std::vector<Token> tokens_;
  size_t next_ = 0;
};

// Narrows the allowed values of a key in `out` to `values`.
void Constrain(size_t key, const std::vector<Scalar>& values,
               std::map<size_t, std::vector<std::string>>* out) {
  std::vector<std::string> allowed;
  for (const Scalar& v : values) allowed.push_back(v.canonical);
  auto [it, inserted] = out->emplace(key, allowed);
  if (inserted) return;
  std::vector<std::string>& existing = it->second;
  existing.erase(std::remove_if(existing.begin(), existing.end(),
                                [&](const std::string& s) {
                                  return std::find(allowed.begin(), allowed.end(), s) ==
                                         allowed.end();
                                }),
                 existing.end());
}

void CollectEqualities(const Node& node, std::map<size_t, std::vector<std::string>>* out) {
  if (node.kind == NodeKind::kCompare && node.op == CompareOp::kEq) {
    Constrain(node.key, node.values, out);
  } else if (node.kind == NodeKind::kIn) {
    Constrain(node.key, node.values, out);
  }
}

}  // namespace

// ---------------------------------------------------------------------------------------------
// PartitionFilter
// ---------------------------------------------------------------------------------------------

PartitionFilter::PartitionFilter(std::unique_ptr<Node> root, size_t key_count)
    : root_(std::move(root)), key_count_(key_count) {}

PartitionFilter::~PartitionFilter() = default;

Result<std::unique_ptr<PartitionFilter>> PartitionFilter::Make(
    std::string_view expression, const std::vector<PartitionKey>& keys) {
  if (std::all_of(expression.begin(), expression.end(), IsSpace)) {
    return Status::InvalidInput("Expression is empty");
  }
  std::vector<KeyInfo> infos;
  infos.reserve(keys.size());
  for (const PartitionKey& key : keys) {
    infos.push_back(KeyInfo{key.name, key.type, Lower(key.name), ClassifyType(key.type)});
  }
  OG_ASSIGN_OR_RETURN(std::vector<Token> tokens, Tokenize(expression));
  Parser parser(expression, infos, std::move(tokens));
  OG_ASSIGN_OR_RETURN(Node root, parser.ParseExpression());
  return std::unique_ptr<PartitionFilter>(
      new PartitionFilter(std::make_unique<Node>(std::move(root)), keys.size()));
}

bool PartitionFilter::Matches(const std::vector<std::string_view>& values) const {
  if (values.size() != key_count_) return false;
  return Evaluate(*root_, values) == Truth::kTrue;
}

std::map<size_t, std::vector<std::string>> PartitionFilter::RequiredEqualities() const {
  std::map<size_t, std::vector<std::string>> out;
  if (root_->kind == NodeKind::kAnd) {
    for (const Node& child : root_->children) CollectEqualities(child, &out);
  } else {
    CollectEqualities(*root_, &out);
  }
  return out;
}

std::string CanonicalPartitionValue(std::string_view type, std::string_view value) {
  KeyKind kind = ClassifyType(type);
  if (kind == KeyKind::kString || kind == KeyKind::kUnsupported) return std::string(value);
  ScalarView view;
  if (!ParseValue(kind, value, &view)) return std::string(value);
  return Canonical(kind, view);
}

}  // namespace openglue::catalog
