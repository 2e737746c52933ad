#include "crawler/inference.h"

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <limits>
#include <set>

#include "common/json.h"
#include "common/strings.h"

namespace openglue::crawler {

using Kind = DataType::Kind;

DataType::DataType() = default;
DataType::~DataType() = default;
DataType::DataType(const DataType&) = default;
DataType::DataType(DataType&&) noexcept = default;
DataType& DataType::operator=(const DataType&) = default;
DataType& DataType::operator=(DataType&&) noexcept = default;

std::string DataType::ToHive() const {
  switch (kind) {
    case Kind::kNull: return "string";
    case Kind::kBoolean: return "boolean";
    case Kind::kInt: return "int";
    case Kind::kBigint: return "bigint";
    case Kind::kDouble: return "double";
    case Kind::kString: return "string";
    case Kind::kOther: return other;
    case Kind::kArray: return "array<" + (element.empty() ? std::string("string") : element[0].ToHive()) + ">";
    case Kind::kStruct: {
      std::string out = "struct<";
      for (size_t i = 0; i < fields.size(); ++i) {
        if (i) out += ",";
        out += fields[i].name + ":" + fields[i].type.ToHive();
      }
      return out + ">";
    }
  }
  return "string";
}

bool DataType::operator==(const DataType& o) const {
  if (kind != o.kind || other != o.other || element.size() != o.element.size() ||
      fields.size() != o.fields.size())
    return false;
  for (size_t i = 0; i < element.size(); ++i)
    if (!(element[i] == o.element[i])) return false;
  for (size_t i = 0; i < fields.size(); ++i)
    if (fields[i].name != o.fields[i].name || !(fields[i].type == o.fields[i].type)) return false;
  return true;
}

namespace {

int NumericRank(Kind k) {
  switch (k) {
    case Kind::kInt: return 1;
    case Kind::kBigint: return 2;
    case Kind::kDouble: return 3;
    default: return 0;
  }
}

}  // namespace

DataType Widen(const DataType& a, const DataType& b, bool* conflict) {
  if (a.kind == Kind::kNull) return b;
  if (b.kind == Kind::kNull) return a;
  if (a == b) return a;
  int ra = NumericRank(a.kind), rb = NumericRank(b.kind);
  if (ra && rb) return ra >= rb ? a : b;
  if (a.kind == Kind::kStruct && b.kind == Kind::kStruct) {
    DataType out = a;
    for (const Field& field : b.fields) {
      auto it = std::find_if(out.fields.begin(), out.fields.end(),
                             [&](const Field& f) { return f.name == field.name; });
      if (it == out.fields.end()) out.fields.push_back(field);
      else it->type = Widen(it->type, field.type, conflict);
    }
    return out;
  }
  if (a.kind == Kind::kArray && b.kind == Kind::kArray) {
    DataType out = a;
    if (out.element.empty()) out.element = b.element;
    else if (!b.element.empty()) out.element[0] = Widen(a.element[0], b.element[0], conflict);
    return out;
  }
  // Two strings-in-all-but-name (a string meets a number or a boolean): string, quietly, as a
  // CSV column with one odd value is still a string column. Anything else is a conflict.
  bool scalar_a = a.kind != Kind::kArray && a.kind != Kind::kStruct;
  bool scalar_b = b.kind != Kind::kArray && b.kind != Kind::kStruct;
  if (conflict && !(scalar_a && scalar_b && (a.kind == Kind::kString || b.kind == Kind::kString)))
    *conflict = true;
  return DataType::Of(Kind::kString);
}

std::vector<std::string> MergeSchema(Schema* into, const Schema& from) {
  std::vector<std::string> conflicts;
  for (const Column& column : from) {
    std::string lower = ToLower(column.name);
    auto it = std::find_if(into->begin(), into->end(),
                           [&](const Column& c) { return ToLower(c.name) == lower; });
    if (it == into->end()) {
      into->push_back(column);
      continue;
    }
    bool conflict = false;
    it->type = Widen(it->type, column.type, &conflict);
    if (conflict) conflicts.push_back(column.name);
  }
  return conflicts;
}

double Similarity(const Schema& a, const Schema& b) {
  std::set<std::string> sa, sb;
  for (const Column& c : a) sa.insert(ToLower(c.name));
  for (const Column& c : b) sb.insert(ToLower(c.name));
  if (sa.empty() && sb.empty()) return 1.0;
  if (sa.empty() || sb.empty()) return 0.0;
  size_t common = 0;
  for (const std::string& n : sa) common += sb.count(n);
  return static_cast<double>(common) / static_cast<double>(std::min(sa.size(), sb.size()));
}

std::string CatalogName(std::string_view name) {
  std::string out;
  for (char c : name) {
    unsigned char u = static_cast<unsigned char>(c);
    if (std::isalnum(u)) out += static_cast<char>(std::tolower(u));
    else out += '_';
  }
  return out;
}

// ---- CSV ------------------------------------------------------------------------------------

namespace {

bool LooksBinary(std::string_view text) {
  if (text.find('\0') != std::string_view::npos) return true;
  return !IsValidUtf8(text);
}

// `text` cut after its last newline unless `complete` (the sample may end inside a record or a
// UTF-8 sequence).
std::string_view WholeLines(std::string_view text, bool complete) {
  if (complete) return text;
  size_t nl = text.rfind('\n');
  return nl == std::string_view::npos ? std::string_view() : text.substr(0, nl + 1);
}

// Splits CSV records: fields separated by `delim`, quoted with `quote` (doubled to escape).
// Stops after `max_records`. `*consumed` is the byte offset after the last record taken.
std::vector<std::vector<std::string>> ParseCsv(std::string_view text, char delim, char quote,
                                               size_t max_records, bool* quoted,
                                               size_t* consumed) {
  std::vector<std::vector<std::string>> records;
  std::vector<std::string> record;
  std::string field;
  bool in_quotes = false;
  size_t i = 0;
  *consumed = 0;
  auto end_record = [&]() {
    record.push_back(std::move(field));
    field.clear();
    // A blank line is no record.
    if (!(record.size() == 1 && record[0].empty())) records.push_back(std::move(record));
    record.clear();
  };
  for (; i < text.size() && records.size() < max_records; ++i) {
    char c = text[i];
    if (in_quotes) {
      if (c == quote) {
        if (i + 1 < text.size() && text[i + 1] == quote) {
          field += quote;
          ++i;
        } else {
          in_quotes = false;
        }
      } else {
        field += c;
      }
      continue;
    }
    if (c == quote && field.empty()) {
      in_quotes = true;
      if (quoted) *quoted = true;
    } else if (c == delim) {
      record.push_back(std::move(field));
      field.clear();
    } else if (c == '\n') {
      if (!field.empty() && field.back() == '\r') field.pop_back();
      end_record();
      *consumed = i + 1;
    } else {
      field += c;
    }
  }
  if (i >= text.size() && (!field.empty() || !record.empty()) && !in_quotes &&
      records.size() < max_records) {
    if (!field.empty() && field.back() == '\r') field.pop_back();
    end_record();
    *consumed = text.size();
  }
  return records;
}

bool ParseInt64(const std::string& s, int64_t* out) {
  if (s.empty() || s.size() > 20) return false;
  size_t i = (s[0] == '-' || s[0] == '+') ? 1 : 0;
  if (i == s.size()) return false;
  for (size_t j = i; j < s.size(); ++j)
    if (!std::isdigit(static_cast<unsigned char>(s[j]))) return false;
  errno = 0;
  char* end = nullptr;
  long long v = std::strtoll(s.c_str(), &end, 10);
  if (errno == ERANGE || end != s.c_str() + s.size()) return false;
  *out = v;
  return true;
}

bool ParseDouble(const std::string& s) {
  if (s.empty() || s.size() > 64) return false;
  bool digit = false;
  for (char c : s) {
    if (std::isdigit(static_cast<unsigned char>(c))) digit = true;
    else if (c != '.' && c != '-' && c != '+' && c != 'e' && c != 'E') return false;
  }
  if (!digit) return false;
  char* end = nullptr;
  double v = std::strtod(s.c_str(), &end);
  return end == s.c_str() + s.size() && std::isfinite(v);
}

// The type of one CSV value (trimmed); kNull for an empty one.
DataType ValueType(const std::string& raw) {
  std::string v = Trim(raw);
  if (v.empty()) return DataType::Of(Kind::kNull);
  std::string lower = ToLower(v);
  if (lower == "true" || lower == "false") return DataType::Of(Kind::kBoolean);
  int64_t i = 0;
  // Glue's CSV classifier types every integer column bigint.
  if (ParseInt64(v, &i)) return DataType::Of(Kind::kBigint);
  if (ParseDouble(v)) return DataType::Of(Kind::kDouble);
  return DataType::Of(Kind::kString);
}

// Hive's column-name rule as Glue's header detection applies it.
bool HeaderName(const std::string& s) {
  if (s.empty() || s.size() >= 150) return false;
  for (char c : s) {
    unsigned char u = static_cast<unsigned char>(c);
    if (!(std::isalnum(u) || c == '_' || c == ' ' || c == '-' || c == '.')) return false;
  }
  return true;
}

}  // namespace

Result<TextSample> InferCsv(std::string_view text, bool complete, const CsvHints& hints) {
  std::string_view lines = WholeLines(text, complete);
  if (LooksBinary(lines)) return Status::InvalidInput("binary content (not UTF-8 text)");
  if (Trim(lines).empty()) return Status::InvalidInput("no complete record in the sample");
  // The delimiter: among the candidates, the one that splits the first records into the same
  // number (> 1) of fields every time; the most fields wins a tie.
  std::vector<char> candidates = hints.delimiter ? std::vector<char>{hints.delimiter}
                                                 : std::vector<char>{',', '|', '\t', ';', '\x01'};
  char best = 0;
  size_t best_fields = 0;
  for (char delim : candidates) {
    size_t consumed = 0;
    auto head = ParseCsv(lines, delim, hints.quote, 20, nullptr, &consumed);
    if (head.empty()) continue;
    size_t fields = head[0].size();
    bool consistent = std::all_of(head.begin(), head.end(),
                                  [&](const auto& r) { return r.size() == fields; });
    bool enough = fields > 1 || (hints.allow_single_column && hints.delimiter);
    if (consistent && enough && fields > best_fields) {
      best = delim;
      best_fields = fields;
    }
  }
  if (best == 0) return Status::InvalidInput("no consistent delimiter (, | tab ; \\u0001) in the first records");
  TextSample out;
  out.classification = "csv";
  out.delimiter = best;
  size_t consumed = 0;
  auto records = ParseCsv(lines, best, hints.quote, kSampleRecords + 1, &out.quoted, &consumed);
  out.sample_bytes = static_cast<int64_t>(consumed);
  // Column types over the data rows (all but a possible header), widened value by value.
  auto types_of = [&](size_t from) {
    std::vector<DataType> types(best_fields);
    for (size_t r = from; r < records.size(); ++r) {
      for (size_t c = 0; c < best_fields && c < records[r].size(); ++c)
        types[c] = Widen(types[c], ValueType(records[r][c]));
    }
    return types;
  };
  const auto& first = records[0];
  bool header = false;
  if (hints.header == CsvHints::Header::kPresent) {
    header = true;
  } else if (hints.header == CsvHints::Header::kDetect) {
    // Glue's rules: every header field is a string that is a valid column name (shorter than
    // 150 characters), no two alike, and the first row differs from the rest: some column whose
    // data is not all strings. With every column a string, the first row is data.
    std::set<std::string> seen;
    bool all_names = true;
    for (const auto& f : first) {
      std::string v = Trim(f);
      if (ValueType(v).kind != Kind::kString || !HeaderName(v) || !seen.insert(ToLower(v)).second)
        all_names = false;
    }
    if (all_names && records.size() > 1) {
      auto data_types = types_of(1);
      header = std::any_of(data_types.begin(), data_types.end(), [](const DataType& t) {
        return t.kind != Kind::kString && t.kind != Kind::kNull;
      });
    } else if (all_names && records.size() == 1) {
      header = true;  // a file holding only a header row
    }
  }
  out.header = header;
  auto types = types_of(header ? 1 : 0);
  for (size_t c = 0; c < best_fields; ++c) {
    Column column;
    if (c < hints.names.size()) column.name = hints.names[c];
    else if (header) column.name = Trim(first[c]);
    else column.name = "col" + std::to_string(c);
    column.type = types[c].kind == Kind::kNull ? DataType::Of(Kind::kString) : types[c];
    out.schema.push_back(std::move(column));
  }
  out.records = static_cast<int64_t>(records.size()) - (header ? 1 : 0);
  return out;
}

// ---- JSON -----------------------------------------------------------------------------------

namespace {

// Records keep their keys in file order (Glue's column order).
using OrderedJson = nlohmann::ordered_json;

OrderedJson ParseOrdered(std::string_view text) {
  return OrderedJson::parse(text.begin(), text.end(), nullptr, /*allow_exceptions=*/false);
}

DataType JsonType(const OrderedJson& v, int depth) {
  if (depth > 64) return DataType::Of(Kind::kString);
  switch (v.type()) {
    case OrderedJson::value_t::null: return DataType::Of(Kind::kNull);
    case OrderedJson::value_t::boolean: return DataType::Of(Kind::kBoolean);
    case OrderedJson::value_t::number_integer:
    case OrderedJson::value_t::number_unsigned: {
      if (v.is_number_unsigned() && v.get<uint64_t>() > static_cast<uint64_t>(std::numeric_limits<int64_t>::max()))
        return DataType::Of(Kind::kDouble);
      int64_t i = v.get<int64_t>();
      return DataType::Of(i >= std::numeric_limits<int32_t>::min() && i <= std::numeric_limits<int32_t>::max()
                              ? Kind::kInt : Kind::kBigint);
    }
    case OrderedJson::value_t::number_float: return DataType::Of(Kind::kDouble);
    case OrderedJson::value_t::string: return DataType::Of(Kind::kString);
    case OrderedJson::value_t::array: {
      DataType t = DataType::Of(Kind::kArray);
      DataType element;
      for (const OrderedJson& e : v) element = Widen(element, JsonType(e, depth + 1));
      t.element.push_back(element);
      return t;
    }
    case OrderedJson::value_t::object: {
      DataType t = DataType::Of(Kind::kStruct);
      for (const auto& [key, value] : v.items()) t.fields.push_back(Field{key, JsonType(value, depth + 1)});
      return t;
    }
    default: return DataType::Of(Kind::kString);
  }
}

// Nulls inside (a struct field, an array element never seen with a value) become string.
void ResolveNulls(DataType* t) {
  if (t->kind == Kind::kNull) *t = DataType::Of(Kind::kString);
  for (auto& f : t->fields) ResolveNulls(&f.type);
  for (auto& e : t->element) ResolveNulls(&e);
}

}  // namespace

namespace {

// One step of a JSON path: a member name, an index, or every element/member ("*").
struct PathStep {
  enum class Kind { kMember, kIndex, kAll } kind;
  std::string name;
  size_t index = 0;
};

Result<std::vector<PathStep>> ParsePath(const std::string& path) {
  if (path.empty() || path[0] != '$') return Status::InvalidInput("JsonPath must start with $: '" + path + "'");
  std::vector<PathStep> steps;
  size_t i = 1;
  auto bad = [&]() { return Status::InvalidInput("JsonPath not supported: '" + path + "'"); };
  while (i < path.size()) {
    if (path[i] == '.') {
      size_t j = i + 1;
      while (j < path.size() && path[j] != '.' && path[j] != '[') ++j;
      std::string name = path.substr(i + 1, j - i - 1);
      if (name.empty()) return bad();
      steps.push_back(name == "*" ? PathStep{PathStep::Kind::kAll, ""} : PathStep{PathStep::Kind::kMember, name});
      i = j;
    } else if (path[i] == '[') {
      size_t close = path.find(']', i);
      if (close == std::string::npos) return bad();
      std::string inner = path.substr(i + 1, close - i - 1);
      if (inner == "*") {
        steps.push_back({PathStep::Kind::kAll, ""});
      } else if (inner.size() >= 2 && (inner[0] == '\'' || inner[0] == '"') && inner.back() == inner[0]) {
        steps.push_back({PathStep::Kind::kMember, inner.substr(1, inner.size() - 2)});
      } else if (!inner.empty() && inner.size() < 10 &&
                 std::all_of(inner.begin(), inner.end(), [](char c) { return std::isdigit(static_cast<unsigned char>(c)); })) {
        steps.push_back({PathStep::Kind::kIndex, "", static_cast<size_t>(std::stoul(inner))});
      } else {
        return bad();
      }
      i = close + 1;
    } else {
      return bad();
    }
  }
  return steps;
}

void Select(const OrderedJson& value, const std::vector<PathStep>& steps, size_t at,
            std::vector<const OrderedJson*>* out) {
  if (out->size() >= static_cast<size_t>(kSampleRecords)) return;
  if (at == steps.size()) {
    out->push_back(&value);
    return;
  }
  const PathStep& step = steps[at];
  if (step.kind == PathStep::Kind::kMember) {
    if (value.is_object() && value.contains(step.name)) Select(value[step.name], steps, at + 1, out);
  } else if (step.kind == PathStep::Kind::kIndex) {
    if (value.is_array() && step.index < value.size()) Select(value[step.index], steps, at + 1, out);
  } else if (value.is_array() || value.is_object()) {
    for (const auto& child : value) Select(child, steps, at + 1, out);
  }
}

// The JSON documents of a sample: the whole text when it parses, else one per line.
std::vector<OrderedJson> Documents(std::string_view text, bool complete) {
  std::vector<OrderedJson> docs;
  OrderedJson whole = ParseOrdered(Trim(text));
  if (!whole.is_discarded()) {
    docs.push_back(std::move(whole));
    return docs;
  }
  std::string_view lines = WholeLines(text, complete);
  size_t pos = 0;
  while (pos < lines.size() && docs.size() < static_cast<size_t>(kSampleRecords)) {
    size_t nl = lines.find('\n', pos);
    size_t end = nl == std::string_view::npos ? lines.size() : nl;
    std::string line = Trim(lines.substr(pos, end - pos));
    pos = end + 1;
    if (line.empty()) continue;
    OrderedJson doc = ParseOrdered(line);
    if (doc.is_discarded()) return {};
    docs.push_back(std::move(doc));
  }
  return docs;
}

}  // namespace

Result<TextSample> InferJsonPath(std::string_view text, bool complete, const std::string& json_path) {
  OG_ASSIGN_OR_RETURN(std::vector<PathStep> steps, ParsePath(json_path));
  if (LooksBinary(WholeLines(text, complete))) return Status::InvalidInput("binary content (not UTF-8 text)");
  std::vector<OrderedJson> docs = Documents(text, complete);
  std::vector<const OrderedJson*> records;
  for (const OrderedJson& doc : docs) Select(doc, steps, 0, &records);
  DataType merged;
  int64_t count = 0;
  for (const OrderedJson* r : records) {
    if (!r->is_object()) continue;
    merged = Widen(merged, JsonType(*r, 0));
    ++count;
  }
  if (count == 0) return Status::InvalidInput("the JsonPath " + json_path + " selects no JSON object");
  ResolveNulls(&merged);
  TextSample out;
  out.classification = "json";
  for (Field& f : merged.fields) out.schema.push_back(Column{f.name, f.type});
  out.records = count;
  out.sample_bytes = static_cast<int64_t>(text.size());
  return out;
}

// ---- XML -------------------------------------------------------------------------------------

namespace {

bool NameChar(char c) {
  unsigned char u = static_cast<unsigned char>(c);
  return std::isalnum(u) || c == '_' || c == '-' || c == '.' || c == ':' || u >= 0x80;
}

// Parses the element starting at `*pos` (at '<') into a type: attributes and children are struct
// fields, text alone a scalar. Returns false on malformed input. `depth` bounds recursion.
bool XmlElement(std::string_view s, size_t* pos, std::string* name, DataType* type, int depth) {
  if (depth > 64 || *pos >= s.size() || s[*pos] != '<') return false;
  size_t i = *pos + 1;
  size_t start = i;
  while (i < s.size() && NameChar(s[i])) ++i;
  if (i == start) return false;
  *name = std::string(s.substr(start, i - start));
  DataType fields = DataType::Of(Kind::kStruct);
  auto add = [&](const std::string& field, const DataType& t) {
    for (Field& f : fields.fields) {
      if (f.name != field) continue;
      // A repeated child is an array of its merged type.
      if (f.type.kind != Kind::kArray) {
        DataType array = DataType::Of(Kind::kArray);
        array.element.push_back(f.type);
        f.type = array;
      }
      f.type.element[0] = Widen(f.type.element[0], t);
      return;
    }
    fields.fields.push_back(Field{field, t});
  };
  // Attributes.
  for (;;) {
    while (i < s.size() && std::isspace(static_cast<unsigned char>(s[i]))) ++i;
    if (i >= s.size()) return false;
    if (s[i] == '/' || s[i] == '>') break;
    size_t a = i;
    while (i < s.size() && NameChar(s[i])) ++i;
    if (i == a) return false;
    std::string attr(s.substr(a, i - a));
    while (i < s.size() && std::isspace(static_cast<unsigned char>(s[i]))) ++i;
    if (i >= s.size() || s[i] != '=') return false;
    ++i;
    while (i < s.size() && std::isspace(static_cast<unsigned char>(s[i]))) ++i;
    if (i >= s.size() || (s[i] != '"' && s[i] != '\'')) return false;
    char q = s[i];
    size_t close = s.find(q, i + 1);
    if (close == std::string_view::npos) return false;
    add(attr, ValueType(std::string(s.substr(i + 1, close - i - 1))));
    i = close + 1;
  }
  if (s[i] == '/') {  // self-closing
    if (i + 1 >= s.size() || s[i + 1] != '>') return false;
    *pos = i + 2;
    *type = fields.fields.empty() ? DataType::Of(Kind::kNull) : fields;
    return true;
  }
  ++i;  // '>'
  std::string text;
  for (;;) {
    size_t lt = s.find('<', i);
    if (lt == std::string_view::npos) return false;
    text.append(s.substr(i, lt - i));
    if (s.substr(lt, 4) == "<!--") {
      size_t end = s.find("-->", lt);
      if (end == std::string_view::npos) return false;
      i = end + 3;
    } else if (s.substr(lt, 9) == "<![CDATA[") {
      size_t end = s.find("]]>", lt);
      if (end == std::string_view::npos) return false;
      text.append(s.substr(lt + 9, end - lt - 9));
      i = end + 3;
    } else if (s.substr(lt, 2) == "</") {
      size_t end = s.find('>', lt);
      if (end == std::string_view::npos || s.substr(lt + 2, end - lt - 2) != *name) return false;
      *pos = end + 1;
      break;
    } else {
      size_t child_pos = lt;
      std::string child;
      DataType child_type;
      if (!XmlElement(s, &child_pos, &child, &child_type, depth + 1)) return false;
      add(child, child_type);
      i = child_pos;
    }
  }
  if (fields.fields.empty()) *type = ValueType(text);
  else *type = fields;
  return true;
}

}  // namespace

Result<TextSample> InferXml(std::string_view text, bool complete, const std::string& row_tag,
                            const std::string& classification) {
  if (row_tag.empty()) return Status::InvalidInput("the XML classifier has no RowTag");
  if (LooksBinary(WholeLines(text, complete))) return Status::InvalidInput("binary content (not UTF-8 text)");
  const std::string open = "<" + row_tag;
  DataType merged = DataType::Of(Kind::kStruct);
  TextSample out;
  out.classification = classification;
  size_t pos = 0;
  while (out.records < kSampleRecords) {
    size_t at = text.find(open, pos);
    if (at == std::string_view::npos) break;
    size_t after = at + open.size();
    if (after < text.size() && NameChar(text[after])) {  // a longer tag name
      pos = after;
      continue;
    }
    size_t end = at;
    std::string name;
    DataType type;
    if (!XmlElement(text, &end, &name, &type, 0)) break;  // malformed, or cut by the sample's end
    pos = end;
    if (text.substr(end - 2, 2) == "/>") continue;  // self-closing: no record
    if (type.kind != Kind::kStruct) {
      DataType single = DataType::Of(Kind::kStruct);
      if (type.kind != Kind::kNull) single.fields.push_back(Field{"value", type});
      type = single;
    }
    merged = Widen(merged, type);
    ++out.records;
    out.sample_bytes = static_cast<int64_t>(end);
  }
  if (out.records == 0) return Status::InvalidInput("no <" + row_tag + "> element with a closing tag");
  ResolveNulls(&merged);
  for (Field& f : merged.fields) out.schema.push_back(Column{f.name, f.type});
  return out;
}

namespace {

// The complete JSON objects and arrays of `text` from `pos` on, by bracket depth outside
// strings: top-level values separated by whitespace (JSON lines, concatenated pretty-printed
// records) or, with `in_array`, the elements of an array up to its ']'. A value cut by the end
// of the sample ends the scan (of a `complete` text, it is malformed). False when a value is a
// scalar (not a record) or malformed.
bool ScanValues(std::string_view text, size_t pos, bool in_array, bool complete,
                std::vector<std::pair<size_t, size_t>>* out) {
  size_t i = pos;
  while (out->size() < static_cast<size_t>(kSampleRecords)) {
    while (i < text.size() && (std::isspace(static_cast<unsigned char>(text[i])) || (in_array && text[i] == ',')))
      ++i;
    if (i >= text.size()) return !(in_array && complete);  // a complete array ends with ']'
    if (in_array && text[i] == ']') return true;
    if (text[i] != '{' && text[i] != '[') return false;
    int64_t depth = 0;
    bool in_string = false, escaped = false;
    size_t j = i;
    for (; j < text.size(); ++j) {
      char c = text[j];
      if (in_string) {
        if (escaped) escaped = false;
        else if (c == '\\') escaped = true;
        else if (c == '"') in_string = false;
      } else if (c == '"') {
        in_string = true;
      } else if (c == '{' || c == '[') {
        ++depth;
      } else if (c == '}' || c == ']') {
        if (--depth == 0) break;
      }
    }
    if (j >= text.size()) return !complete;  // cut by the sample's end
    out->emplace_back(i, j + 1);
    i = j + 1;
  }
  return true;
}

}  // namespace

Result<TextSample> InferJson(std::string_view text, bool complete) {
  if (LooksBinary(WholeLines(text, complete))) return Status::InvalidInput("binary content (not UTF-8 text)");
  size_t first = text.find_first_not_of(" \t\r\n");
  if (first == std::string_view::npos) return Status::InvalidInput("empty file");
  // One array of records (possibly cut by the sample's end), or records one after another.
  std::vector<std::pair<size_t, size_t>> spans;
  bool records_only = text[first] == '['
                          ? ScanValues(text, first + 1, /*in_array=*/true, complete, &spans)
                          : ScanValues(text, first, /*in_array=*/false, complete, &spans);
  if (!records_only)
    return Status::InvalidInput("not JSON records (a value that is not an object or array, or one that never closes)");
  if (spans.empty()) return Status::InvalidInput("no complete JSON record in the sample");
  DataType merged;
  for (const auto& [begin, end] : spans) {
    OrderedJson record = ParseOrdered(text.substr(begin, end - begin));
    if (record.is_discarded()) return Status::InvalidInput("a record is not valid JSON");
    if (!record.is_object()) return Status::InvalidInput("a JSON record is not an object");
    merged = Widen(merged, JsonType(record, 0));
  }
  ResolveNulls(&merged);
  TextSample out;
  out.classification = "json";
  for (Field& f : merged.fields) out.schema.push_back(Column{f.name, f.type});
  out.records = static_cast<int64_t>(spans.size());
  out.sample_bytes = static_cast<int64_t>(spans.back().second);
  return out;
}

}  // namespace openglue::crawler
