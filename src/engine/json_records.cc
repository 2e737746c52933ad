#include "engine/json_records.h"

#include <cctype>
#include <limits>

#include <arrow/api.h>

#include "engine/glue_types.h"

namespace openglue::engine {

Result<JsonPath> ParseJsonPath(std::string_view path) {
  JsonPath out;
  std::string p;
  for (char c : path) {
    if (!std::isspace(static_cast<unsigned char>(c))) p.push_back(c);
  }
  if (p.empty() || p == "$") return out;
  if (p == "$[*]") {
    out.kind = JsonPath::Kind::kRootArray;
    return out;
  }
  if (p.size() > 5 && p.rfind("$.", 0) == 0 && p.substr(p.size() - 3) == "[*]") {
    out.field = p.substr(2, p.size() - 5);
  } else if (p.size() > 9 && p.rfind("$['", 0) == 0 && p.substr(p.size() - 5) == "'][*]") {
    out.field = p.substr(3, p.size() - 8);
  }
  if (out.field.empty() || out.field.find_first_of(".[]'*") != std::string::npos) {
    return Status::InvalidInput("jsonPath '" + std::string(path) +
                                "' is not supported (only $[*] and $.field[*])");
  }
  out.kind = JsonPath::Kind::kFieldArray;
  return out;
}

namespace {

inline bool IsSpace(char c) { return c == ' ' || c == '\n' || c == '\r' || c == '\t'; }

Status Invalid(size_t at, const char* what) {
  return Status::InvalidInput("invalid JSON at byte " + std::to_string(at) + ": " + what);
}

// The end (one past) of the value starting at `i`; strings and brackets are tracked, scalars run
// to the next delimiter.
Status ValueEnd(std::string_view t, size_t i, size_t* end) {
  size_t n = t.size();
  char c = t[i];
  if (c == '"') {
    for (size_t k = i + 1; k < n; ++k) {
      if (t[k] == '\\') {
        ++k;
      } else if (t[k] == '"') {
        *end = k + 1;
        return Status::OK();
      }
    }
    return Invalid(i, "unterminated string");
  }
  if (c == '{' || c == '[') {
    std::vector<char> stack;
    for (size_t k = i; k < n; ++k) {
      char d = t[k];
      if (d == '"') {
        size_t e;
        OG_RETURN_NOT_OK(ValueEnd(t, k, &e));
        k = e - 1;
      } else if (d == '{' || d == '[') {
        stack.push_back(d);
      } else if (d == '}' || d == ']') {
        if (stack.empty() || (d == '}' ? '{' : '[') != stack.back()) {
          return Invalid(k, "unbalanced brackets");
        }
        stack.pop_back();
        if (stack.empty()) {
          *end = k + 1;
          return Status::OK();
        }
      }
    }
    return Invalid(i, "unterminated object or array");
  }
  if (c == '}' || c == ']' || c == ',' || c == ':') return Invalid(i, "unexpected character");
  size_t k = i;
  while (k < n && !IsSpace(t[k]) && t[k] != ',' && t[k] != ']' && t[k] != '}' && t[k] != '[' &&
         t[k] != '{' && t[k] != '"') {
    ++k;
  }
  *end = k;
  return Status::OK();
}

}  // namespace

Status SplitJsonValues(std::string_view text, bool split_root_arrays,
                       std::vector<std::string_view>* out) {
  size_t n = text.size(), i = 0;
  // A UTF-8 byte order mark at the start is not part of the JSON.
  if (n >= 3 && text.substr(0, 3) == "\xEF\xBB\xBF") i = 3;
  while (true) {
    while (i < n && IsSpace(text[i])) ++i;
    if (i == n) return Status::OK();
    if (text[i] == '[' && split_root_arrays) {
      ++i;
      while (i < n && IsSpace(text[i])) ++i;
      if (i < n && text[i] == ']') {
        ++i;
        continue;
      }
      while (true) {
        if (i >= n) return Invalid(i, "unterminated array");
        size_t end;
        OG_RETURN_NOT_OK(ValueEnd(text, i, &end));
        out->push_back(text.substr(i, end - i));
        i = end;
        while (i < n && IsSpace(text[i])) ++i;
        if (i < n && text[i] == ',') {
          ++i;
          while (i < n && IsSpace(text[i])) ++i;
          continue;
        }
        if (i < n && text[i] == ']') {
          ++i;
          break;
        }
        return Invalid(i, "expected ',' or ']'");
      }
      continue;
    }
    size_t end;
    OG_RETURN_NOT_OK(ValueEnd(text, i, &end));
    if (end == i) return Invalid(i, "unexpected character");
    out->push_back(text.substr(i, end - i));
    i = end;
  }
}

namespace {

// Inference and building recurse per nesting level: deeper input is refused up front.
constexpr int kMaxJsonDepth = 200;

bool TooDeep(std::string_view text) {
  int depth = 0;
  bool in_string = false;
  for (size_t i = 0; i < text.size(); ++i) {
    char c = text[i];
    if (in_string) {
      if (c == '\\') {
        ++i;
      } else if (c == '"') {
        in_string = false;
      }
    } else if (c == '"') {
      in_string = true;
    } else if (c == '{' || c == '[') {
      if (++depth > kMaxJsonDepth) return true;
    } else if (c == '}' || c == ']') {
      --depth;
    }
  }
  return false;
}

}  // namespace

Status ParseJsonRecords(std::string_view text, const JsonPath& path,
                        std::vector<JsonValue>* records) {
  if (TooDeep(text)) {
    return Status::InvalidInput("JSON nested deeper than " + std::to_string(kMaxJsonDepth) +
                                " levels");
  }
  JsonValue value = JsonValue::parse(text.begin(), text.end(), nullptr, false);
  if (value.is_discarded()) {
    // Find the parser's own message (position and reason) for the error.
    std::string detail = "not valid JSON";
    try {
      JsonValue ignored = JsonValue::parse(text.begin(), text.end());
      (void)ignored;
    } catch (const JsonValue::exception& e) {
      detail = e.what();
    }
    return Status::InvalidInput(detail);
  }
  auto take_elements = [&](JsonValue& array) -> Status {
    for (auto& element : array) {
      if (!element.is_object()) {
        return Status::InvalidInput("a record is " + std::string(element.type_name()) +
                                    ", not a JSON object");
      }
      records->push_back(std::move(element));
    }
    return Status::OK();
  };
  switch (path.kind) {
    case JsonPath::Kind::kNone:
      if (value.is_object()) {
        records->push_back(std::move(value));
        return Status::OK();
      }
      if (value.is_array()) return take_elements(value);
      return Status::InvalidInput("a record is " + std::string(value.type_name()) +
                                  ", not a JSON object");
    case JsonPath::Kind::kRootArray:
      if (!value.is_array()) return Status::OK();  // $[*] matches nothing in a non-array
      return take_elements(value);
    case JsonPath::Kind::kFieldArray: {
      if (!value.is_object()) return Status::OK();
      auto it = value.find(path.field);
      if (it == value.end() || !it->is_array()) return Status::OK();
      return take_elements(*it);
    }
  }
  return Status::OK();
}

std::shared_ptr<arrow::DataType> InferJsonType(const JsonValue& value) {
  switch (value.type()) {
    case JsonValue::value_t::null: return arrow::null();
    case JsonValue::value_t::boolean: return arrow::boolean();
    case JsonValue::value_t::number_integer: {
      int64_t v = value.get<int64_t>();
      return (v >= INT32_MIN && v <= INT32_MAX) ? arrow::int32() : arrow::int64();
    }
    case JsonValue::value_t::number_unsigned: {
      uint64_t v = value.get<uint64_t>();
      if (v <= INT32_MAX) return arrow::int32();
      if (v <= static_cast<uint64_t>(std::numeric_limits<int64_t>::max())) return arrow::int64();
      return arrow::float64();
    }
    case JsonValue::value_t::number_float: return arrow::float64();
    case JsonValue::value_t::string: return arrow::utf8();
    case JsonValue::value_t::array: {
      std::shared_ptr<arrow::DataType> element = arrow::null();
      for (const auto& item : value) element = MergeTypes(element, InferJsonType(item));
      return arrow::list(element);
    }
    case JsonValue::value_t::object: {
      arrow::FieldVector fields;
      for (auto it = value.begin(); it != value.end(); ++it) {
        fields.push_back(arrow::field(it.key(), InferJsonType(it.value())));
      }
      return arrow::struct_(std::move(fields));
    }
    default: return arrow::utf8();
  }
}

namespace {

// `type` widened to hold `v` too. The common case (the value fits the type as it is) returns
// the same pointer without building any type, which keeps inference cheap per record.
std::shared_ptr<arrow::DataType> MergeValue(const std::shared_ptr<arrow::DataType>& type,
                                            const JsonValue& v) {
  if (v.is_null()) return type;
  const arrow::Type::type id = type->id();
  switch (v.type()) {
    case JsonValue::value_t::object: {
      if (id != arrow::Type::STRUCT) break;
      const auto& st = static_cast<const arrow::StructType&>(*type);
      arrow::FieldVector fields;  // filled only once something changes
      for (auto it = v.begin(); it != v.end(); ++it) {
        int index = st.GetFieldIndex(it.key());
        std::shared_ptr<arrow::DataType> merged =
            index < 0 ? InferJsonType(it.value()) : MergeValue(st.field(index)->type(), it.value());
        if (index >= 0 && merged.get() == st.field(index)->type().get()) continue;
        if (fields.empty()) fields = st.fields();
        if (index < 0) {
          // Also handles a key repeated within the object (the first one placed it).
          int again = -1;
          for (size_t k = st.num_fields(); k < fields.size(); ++k) {
            if (fields[k]->name() == it.key()) again = static_cast<int>(k);
          }
          if (again < 0) {
            fields.push_back(arrow::field(it.key(), merged));
          } else {
            fields[again] = arrow::field(it.key(), MergeTypes(fields[again]->type(), merged));
          }
        } else {
          fields[index] = arrow::field(it.key(), MergeTypes(fields[index]->type(), merged));
        }
      }
      if (fields.empty()) return type;
      return arrow::struct_(std::move(fields));
    }
    case JsonValue::value_t::array: {
      if (id != arrow::Type::LIST) break;
      const auto& element = type->field(0)->type();
      std::shared_ptr<arrow::DataType> merged = element;
      for (const auto& item : v) merged = MergeValue(merged, item);
      if (merged.get() == element.get()) return type;
      return arrow::list(merged);
    }
    default: {
      auto scalar = InferJsonType(v);
      if (scalar->id() == id) return type;
      if (id == arrow::Type::INT64 && scalar->id() == arrow::Type::INT32) return type;
      if (id == arrow::Type::DOUBLE && v.is_number()) return type;
      break;
    }
  }
  if (id == arrow::Type::NA) return InferJsonType(v);
  return MergeTypes(type, InferJsonType(v));
}

}  // namespace

std::shared_ptr<arrow::DataType> InferRecordsType(const std::vector<JsonValue>& records) {
  std::shared_ptr<arrow::DataType> type = arrow::struct_({});
  for (const auto& record : records) type = MergeValue(type, record);
  return type;
}

namespace {

std::string SlotOfValue(const JsonValue& v) {
  switch (v.type()) {
    case JsonValue::value_t::boolean: return "boolean";
    case JsonValue::value_t::number_integer:
    case JsonValue::value_t::number_unsigned:
    case JsonValue::value_t::number_float: return "#numeric";
    case JsonValue::value_t::string: return "string";
    case JsonValue::value_t::array: return "array";
    case JsonValue::value_t::object: return "struct";
    default: return "null";
  }
}

arrow::Status Append(arrow::ArrayBuilder* b, const arrow::DataType& type, const JsonValue& v) {
  if (v.is_null() && type.id() != arrow::Type::DENSE_UNION) return b->AppendNull();
  switch (type.id()) {
    case arrow::Type::NA: return b->AppendNull();
    case arrow::Type::BOOL:
      if (v.is_boolean()) return static_cast<arrow::BooleanBuilder*>(b)->Append(v.get<bool>());
      return b->AppendNull();
    case arrow::Type::INT32:
    case arrow::Type::INT64: {
      int64_t x;
      if (v.is_number_integer()) {
        x = v.get<int64_t>();
      } else if (v.is_number_unsigned() &&
                 v.get<uint64_t>() <= static_cast<uint64_t>(std::numeric_limits<int64_t>::max())) {
        x = static_cast<int64_t>(v.get<uint64_t>());
      } else {
        return b->AppendNull();
      }
      if (type.id() == arrow::Type::INT64) return static_cast<arrow::Int64Builder*>(b)->Append(x);
      if (x < INT32_MIN || x > INT32_MAX) return b->AppendNull();
      return static_cast<arrow::Int32Builder*>(b)->Append(static_cast<int32_t>(x));
    }
    case arrow::Type::DOUBLE:
      if (v.is_number()) return static_cast<arrow::DoubleBuilder*>(b)->Append(v.get<double>());
      return b->AppendNull();
    case arrow::Type::STRING:
      if (v.is_string()) {
        return static_cast<arrow::StringBuilder*>(b)->Append(v.get_ref<const std::string&>());
      }
      return b->AppendNull();
    case arrow::Type::LIST: {
      if (!v.is_array()) return b->AppendNull();
      auto* list = static_cast<arrow::ListBuilder*>(b);
      ARROW_RETURN_NOT_OK(list->Append());
      const auto& element_type = *type.field(0)->type();
      for (const auto& item : v) {
        ARROW_RETURN_NOT_OK(Append(list->value_builder(), element_type, item));
      }
      return arrow::Status::OK();
    }
    case arrow::Type::STRUCT: {
      if (!v.is_object()) return b->AppendNull();
      auto* st = static_cast<arrow::StructBuilder*>(b);
      ARROW_RETURN_NOT_OK(st->Append());
      for (int i = 0; i < type.num_fields(); ++i) {
        auto it = v.find(type.field(i)->name());
        auto* child = st->field_builder(i);
        if (it == v.end()) {
          ARROW_RETURN_NOT_OK(child->AppendNull());
        } else {
          ARROW_RETURN_NOT_OK(Append(child, *type.field(i)->type(), *it));
        }
      }
      return arrow::Status::OK();
    }
    case arrow::Type::DENSE_UNION: {
      auto* u = static_cast<arrow::DenseUnionBuilder*>(b);
      const auto& ut = static_cast<const arrow::UnionType&>(type);
      int member = 0;
      if (!v.is_null()) {
        std::string slot = SlotOfValue(v);
        member = -1;
        for (int i = 0; i < ut.num_fields(); ++i) {
          if (ChoiceSlot(*ut.field(i)->type()) == slot) member = i;
        }
        if (member < 0) return u->AppendNull();
      }
      ARROW_RETURN_NOT_OK(u->Append(ut.type_codes()[member]));
      return Append(u->child_builder(member).get(), *ut.field(member)->type(), v);
    }
    default: return b->AppendNull();
  }
}

}  // namespace

Result<std::shared_ptr<arrow::RecordBatch>> BuildJsonBatch(
    const std::vector<JsonValue>& records, const std::shared_ptr<arrow::Schema>& schema) {
  auto type = arrow::struct_(schema->fields());
  std::unique_ptr<arrow::ArrayBuilder> builder;
  arrow::Status st = arrow::MakeBuilder(arrow::default_memory_pool(), type, &builder);
  for (size_t i = 0; st.ok() && i < records.size(); ++i) st = Append(builder.get(), *type, records[i]);
  std::shared_ptr<arrow::Array> out;
  if (st.ok()) st = builder->Finish(&out);
  if (!st.ok()) return Status::Internal("building JSON records: " + st.ToString());
  auto batch = arrow::RecordBatch::FromStructArray(out);
  if (!batch.ok()) return Status::Internal(batch.status().ToString());
  return arrow::RecordBatch::Make(schema, (*batch)->num_rows(), (*batch)->columns());
}

}  // namespace openglue::engine
