#include "api/service_model.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <ctime>

#include "common/strings.h"

namespace openglue::api {

std::string_view EmbeddedGlueModel();
std::string_view EmbeddedLogsModel();

namespace {

// AWS names members in validation messages in lowerCamelCase.
std::string LowerCamel(const std::string& name) {
  std::string out = name;
  if (!out.empty()) out[0] = static_cast<char>(std::tolower(static_cast<unsigned char>(out[0])));
  return out;
}

std::string Shown(const Json& value) {
  if (value.is_string()) return value.get<std::string>();
  return DumpJson(value);
}

// Characters, not bytes: AWS counts UTF-16 code units; counting code points differs only for
// characters outside the Basic Multilingual Plane.
size_t Utf8Length(const std::string& s) {
  size_t n = 0;
  for (unsigned char c : s) {
    if ((c & 0xC0) != 0x80) ++n;
    if (c >= 0xF0) ++n;  // a supplementary character is two UTF-16 units
  }
  return n;
}

const char* JsonTypeName(const Json& value) {
  switch (value.type()) {
    case Json::value_t::null: return "null";
    case Json::value_t::object: return "an object";
    case Json::value_t::array: return "a list";
    case Json::value_t::string: return "a string";
    case Json::value_t::boolean: return "a boolean";
    case Json::value_t::number_integer:
    case Json::value_t::number_unsigned: return "an integer";
    case Json::value_t::number_float: return "a number";
    default: return "an unsupported value";
  }
}

// Parses ISO-8601 "YYYY-MM-DDTHH:MM:SS[.fff][Z|+hh:mm]" into epoch seconds.
bool ParseIsoTimestamp(const std::string& text, double* out) {
  int y, mo, d, h = 0, mi = 0;
  double s = 0;
  char sep = 'T';
  int consumed = 0;
  if (std::sscanf(text.c_str(), "%4d-%2d-%2d%c%2d:%2d:%lf%n", &y, &mo, &d, &sep, &h, &mi, &s,
                  &consumed) < 7) {
    if (std::sscanf(text.c_str(), "%4d-%2d-%2d%n", &y, &mo, &d, &consumed) < 3 ||
        consumed != static_cast<int>(text.size()))
      return false;
  }
  std::tm tm{};
  tm.tm_year = y - 1900;
  tm.tm_mon = mo - 1;
  tm.tm_mday = d;
  tm.tm_hour = h;
  tm.tm_min = mi;
  tm.tm_sec = 0;
  double epoch = static_cast<double>(timegm(&tm)) + s;
  std::string rest = consumed < static_cast<int>(text.size()) ? text.substr(consumed) : "";
  if (!rest.empty() && rest != "Z") {
    int oh = 0, om = 0;
    char sign = rest[0];
    if ((sign != '+' && sign != '-') || std::sscanf(rest.c_str() + 1, "%2d:%2d", &oh, &om) != 2)
      return false;
    double offset = oh * 3600.0 + om * 60.0;
    epoch += sign == '+' ? -offset : offset;
  }
  *out = epoch;
  return true;
}

// The model's two text patterns that most names and descriptions use, checked exactly: "single
// line" (no control characters but tab) and "text" (no control characters but tab, CR, LF).
// Other patterns are not checked (they use Java regex syntax over UTF-16).
bool MatchesTextPattern(const std::string& pattern, const std::string& value) {
  static const std::string kSingleLine =
      "[\\u0020-\\uD7FF\\uE000-\\uFFFD\\uD800\\uDC00-\\uDBFF\\uDFFF\\t]*";
  static const std::string kMultiLine =
      "[\\u0020-\\uD7FF\\uE000-\\uFFFD\\uD800\\uDC00-\\uDBFF\\uDFFF\\r\\n\\t]*";
  bool single = pattern == kSingleLine;
  if (!single && pattern != kMultiLine) return true;
  for (unsigned char c : value) {
    if (c >= 0x20) continue;
    if (c == '\t') continue;
    if (!single && (c == '\r' || c == '\n')) continue;
    return false;
  }
  return true;
}

class Validator {
 public:
  explicit Validator(const Json& shapes) : shapes_(shapes) {}

  // Returns a SerializationException status for a type mismatch (the first one wins);
  // constraint violations accumulate in errors_.
  Status Check(const std::string& shape_name, Json* value, const std::string& path, int depth) {
    if (depth > 64) return Status::Serialization("Request nesting is too deep at '" + path + "'");
    auto it = shapes_.find(shape_name);
    if (it == shapes_.end()) return Status::OK();
    const Json& shape = *it;
    const std::string type = shape.value("type", "structure");
    if (value->is_null()) return Status::OK();  // JSON null is the same as absent
    if (type == "structure") {
      if (shape.value("document", false)) return Status::OK();
      if (!value->is_object()) return TypeError(path, "an object", *value);
      const Json& members = shape["members"];
      if (auto required = shape.find("required"); required != shape.end()) {
        for (const Json& member : *required) {
          const std::string& name = member.get_ref<const std::string&>();
          auto present = value->find(name);
          if (present == value->end() || present->is_null())
            Violation("null", Join(path, name), "Member must not be null");
        }
      }
      // Members the model does not know are dropped, as AWS does, so the catalog never
      // stores them (it copies nested structures such as StorageDescriptor whole). A member
      // that is JSON null is absent: dropped too, so no handler reads a null where it expects
      // a value (found by request_fuzz: StartJobRun {"Timeout": null} gave HTTP 500).
      for (auto m = value->begin(); m != value->end();) {
        if (members.contains(m.key()) && !m.value().is_null()) ++m;
        else m = value->erase(m);
      }
      int set_members = 0;
      for (auto& [name, member] : value->items()) {
        auto m = members.find(name);
        if (m == members.end()) continue;
        if (!member.is_null()) ++set_members;
        OG_RETURN_NOT_OK(Check((*m)["shape"].get_ref<const std::string&>(), &member,
                               Join(path, name), depth + 1));
      }
      if (shape.value("union", false) && set_members != 1)
        Violation(Shown(*value), path.empty() ? "request" : path,
                  "Member must have exactly one of its members set");
      return Status::OK();
    }
    if (type == "list") {
      if (!value->is_array()) return TypeError(path, "a list", *value);
      CheckSize(shape, value->size(), *value, path);
      const std::string& member_shape = shape["member"]["shape"].get_ref<const std::string&>();
      size_t i = 0;
      for (Json& element : *value) {
        ++i;
        OG_RETURN_NOT_OK(Check(member_shape, &element, path + "." + std::to_string(i) + ".member", depth + 1));
      }
      return Status::OK();
    }
    if (type == "map") {
      if (!value->is_object()) return TypeError(path, "a map", *value);
      CheckSize(shape, value->size(), *value, path);
      const std::string key_shape = shape["key"]["shape"];
      const std::string value_shape = shape["value"]["shape"];
      for (auto& [key, element] : value->items()) {
        Json key_json = key;
        OG_RETURN_NOT_OK(Check(key_shape, &key_json, path + ".key", depth + 1));
        OG_RETURN_NOT_OK(Check(value_shape, &element, path + ".value", depth + 1));
      }
      return Status::OK();
    }
    if (type == "string") {
      if (!value->is_string()) return TypeError(path, "a string", *value);
      const std::string& s = value->get_ref<const std::string&>();
      size_t length = Utf8Length(s);
      if (shape.contains("min") && length < shape["min"].get<size_t>())
        Violation(s, path, "Member must have length greater than or equal to " + DumpJson(shape["min"]));
      if (shape.contains("max") && length > shape["max"].get<size_t>())
        Violation(s, path, "Member must have length less than or equal to " + DumpJson(shape["max"]));
      if (shape.contains("pattern") && !MatchesTextPattern(shape["pattern"].get<std::string>(), s))
        Violation(s, path, "Member must satisfy regular expression pattern: " +
                               shape["pattern"].get<std::string>());
      if (shape.contains("enum")) {
        const Json& values = shape["enum"];
        if (std::find(values.begin(), values.end(), *value) == values.end()) {
          std::vector<std::string> names;
          for (const Json& v : values) names.push_back(v.get<std::string>());
          Violation(s, path, "Member must satisfy enum value set: [" + openglue::Join(names, ", ") + "]");
        }
      }
      return Status::OK();
    }
    if (type == "integer" || type == "long") {
      if (!value->is_number_integer()) {
        if (value->is_number_float()) {
          double d = value->get<double>();
          if (std::floor(d) == d && std::fabs(d) < 9.2e18) {
            *value = static_cast<int64_t>(d);
          } else {
            return TypeError(path, "an integer", *value);
          }
        } else {
          return TypeError(path, "an integer", *value);
        }
      }
      // An integer above INT64_MAX arrives as an unsigned number; get<int64_t> would wrap it.
      if (value->is_number_unsigned() &&
          value->get<uint64_t>() > static_cast<uint64_t>(INT64_MAX))
        return Status::Serialization("Member '" + path + "' is out of range for a 64-bit integer");
      int64_t v = value->get<int64_t>();
      if (shape.contains("min") && v < shape["min"].get<int64_t>())
        Violation(Shown(*value), path, "Member must have value greater than or equal to " + DumpJson(shape["min"]));
      if (shape.contains("max") && v > shape["max"].get<int64_t>())
        Violation(Shown(*value), path, "Member must have value less than or equal to " + DumpJson(shape["max"]));
      if (type == "integer" && (v > 2147483647LL || v < -2147483648LL))
        return Status::Serialization("Member '" + path + "' is out of range for a 32-bit integer");
      return Status::OK();
    }
    if (type == "double" || type == "float") {
      if (!value->is_number()) return TypeError(path, "a number", *value);
      double v = value->get<double>();
      if (shape.contains("min") && v < shape["min"].get<double>())
        Violation(Shown(*value), path, "Member must have value greater than or equal to " + DumpJson(shape["min"]));
      if (shape.contains("max") && v > shape["max"].get<double>())
        Violation(Shown(*value), path, "Member must have value less than or equal to " + DumpJson(shape["max"]));
      return Status::OK();
    }
    if (type == "boolean") {
      if (!value->is_boolean()) return TypeError(path, "a boolean", *value);
      return Status::OK();
    }
    if (type == "timestamp") {
      if (value->is_number()) return Status::OK();
      double epoch = 0;
      if (value->is_string() && ParseIsoTimestamp(value->get<std::string>(), &epoch)) {
        *value = epoch;
        return Status::OK();
      }
      return TypeError(path, "a timestamp (epoch seconds or ISO-8601)", *value);
    }
    if (type == "blob") {
      std::string decoded;
      if (!value->is_string() || !Base64Decode(value->get<std::string>(), &decoded))
        return TypeError(path, "base64-encoded bytes", *value);
      CheckSize(shape, decoded.size(), *value, path);
      return Status::OK();
    }
    return Status::OK();
  }

  Status Result() const {
    if (errors_.empty()) return Status::OK();
    std::string message = std::to_string(errors_.size()) +
                          (errors_.size() == 1 ? " validation error detected: " : " validation errors detected: ");
    for (size_t i = 0; i < errors_.size(); ++i) {
      if (i) message += "; ";
      message += errors_[i];
    }
    return Status::Validation(message);
  }

 private:
  static std::string Join(const std::string& path, const std::string& member) {
    return path.empty() ? LowerCamel(member) : path + "." + LowerCamel(member);
  }

  Status TypeError(const std::string& path, const char* expected, const Json& got) {
    return Status::Serialization("Member '" + (path.empty() ? std::string("request") : path) +
                                 "' must be " + expected + ", but the request has " +
                                 JsonTypeName(got));
  }

  void CheckSize(const Json& shape, size_t size, const Json& value, const std::string& path) {
    if (shape.contains("min") && size < shape["min"].get<size_t>())
      Violation(Shown(value), path, "Member must have length greater than or equal to " + DumpJson(shape["min"]));
    if (shape.contains("max") && size > shape["max"].get<size_t>())
      Violation(Shown(value), path, "Member must have length less than or equal to " + DumpJson(shape["max"]));
  }

  void Violation(const std::string& shown, const std::string& path, const std::string& constraint) {
    std::string value = shown.size() > 256 ? shown.substr(0, 256) + "..." : shown;
    std::string text = shown == "null" ? "Value null" : "Value '" + value + "'";
    errors_.push_back(text + " at '" + path + "' failed to satisfy constraint: " + constraint);
  }

  const Json& shapes_;
  std::vector<std::string> errors_;
};

}  // namespace

Result<std::unique_ptr<ServiceModel>> ServiceModel::Make(const std::string& model_json) {
  Json model = Json::parse(model_json, nullptr, /*allow_exceptions=*/false);
  if (model.is_discarded() || !model.contains("operations") || !model.contains("shapes"))
    return Status::Internal("the embedded service model is not valid JSON");
  return std::unique_ptr<ServiceModel>(new ServiceModel(std::move(model)));
}

Result<std::unique_ptr<ServiceModel>> ServiceModel::MakeEmbedded() {
  return Make(std::string(EmbeddedGlueModel()));
}

Result<std::unique_ptr<ServiceModel>> ServiceModel::MakeEmbeddedLogs() {
  return Make(std::string(EmbeddedLogsModel()));
}

bool ServiceModel::HasOperation(const std::string& operation) const {
  return model_["operations"].contains(operation);
}

std::vector<std::string> ServiceModel::OperationNames() const {
  std::vector<std::string> names;
  for (auto& [name, op] : model_["operations"].items()) names.push_back(name);
  std::sort(names.begin(), names.end());
  return names;
}

Status ServiceModel::Validate(const std::string& operation, Json* request) const {
  auto found = model_["operations"].find(operation);
  if (found == model_["operations"].end()) return Status(StatusCode::kUnknownOperation, operation);
  const Json& op = *found;
  if (!op.contains("input")) return Status::OK();
  if (!request->is_object())
    return Status::Serialization("The request body must be a JSON object");
  Validator validator(model_["shapes"]);
  OG_RETURN_NOT_OK(validator.Check(op["input"]["shape"].get<std::string>(), request, "", 0));
  return validator.Result();
}

Status ServiceModel::ValidateShape(const std::string& shape, const std::string& path,
                                   Json* value) const {
  Validator validator(model_["shapes"]);
  OG_RETURN_NOT_OK(validator.Check(shape, value, path, 1));
  return validator.Result();
}

}  // namespace openglue::api
