#include "crawler/grok.h"

#include <map>

#include <re2/re2.h>

#include "common/strings.h"

namespace openglue::crawler {

namespace {

// A subset of the usual grok library, written for RE2 (no look-around, no backreferences).
const std::map<std::string, std::string>& BuiltinPatterns() {
  static const std::map<std::string, std::string> kPatterns = {
      {"USERNAME", R"([a-zA-Z0-9._-]+)"},
      {"USER", R"(%{USERNAME})"},
      {"INT", R"((?:[+-]?(?:[0-9]+)))"},
      {"BASE10NUM", R"([+-]?(?:[0-9]+(?:\.[0-9]+)?|\.[0-9]+))"},
      {"NUMBER", R"((?:%{BASE10NUM}))"},
      {"POSINT", R"(\b(?:[1-9][0-9]*)\b)"},
      {"NONNEGINT", R"(\b(?:[0-9]+)\b)"},
      {"WORD", R"(\b\w+\b)"},
      {"NOTSPACE", R"(\S+)"},
      {"SPACE", R"(\s*)"},
      {"DATA", R"(.*?)"},
      {"GREEDYDATA", R"(.*)"},
      {"QUOTEDSTRING", R"("(?:[^"\\]|\\.)*")"},
      {"UUID", R"([A-Fa-f0-9]{8}-(?:[A-Fa-f0-9]{4}-){3}[A-Fa-f0-9]{12})"},
      {"IPV4", R"((?:[0-9]{1,3}\.){3}[0-9]{1,3})"},
      {"IPV6", R"([0-9A-Fa-f:]+:[0-9A-Fa-f:.]+)"},
      {"IP", R"((?:%{IPV6}|%{IPV4}))"},
      {"HOSTNAME", R"(\b[0-9A-Za-z][0-9A-Za-z-]{0,62}(?:\.[0-9A-Za-z][0-9A-Za-z-]{0,62})*\.?\b)"},
      {"IPORHOST", R"((?:%{IP}|%{HOSTNAME}))"},
      {"HOSTPORT", R"(%{IPORHOST}:%{POSINT})"},
      {"PATH", R"((?:/[^ ]*)+)"},
      {"URIPATH", R"((?:/[A-Za-z0-9$.+!*'(){},~:;=@#%&_\-]*)+)"},
      {"URI", R"([A-Za-z][A-Za-z0-9+\-.]*://\S+)"},
      {"MONTHNUM", R"((?:0?[1-9]|1[0-2]))"},
      {"MONTHDAY", R"((?:(?:0[1-9])|(?:[12][0-9])|(?:3[01])|[1-9]))"},
      {"MONTH", R"(\b(?:Jan(?:uary)?|Feb(?:ruary)?|Mar(?:ch)?|Apr(?:il)?|May|Jun(?:e)?|Jul(?:y)?|Aug(?:ust)?|Sep(?:tember)?|Oct(?:ober)?|Nov(?:ember)?|Dec(?:ember)?)\b)"},
      {"YEAR", R"((?:\d\d){1,2})"},
      {"HOUR", R"((?:2[0123]|[01]?[0-9]))"},
      {"MINUTE", R"((?:[0-5][0-9]))"},
      {"SECOND", R"((?:(?:[0-5]?[0-9]|60)(?:[:.,][0-9]+)?))"},
      {"TIME", R"(%{HOUR}:%{MINUTE}(?::%{SECOND}))"},
      {"ISO8601_TIMEZONE", R"((?:Z|[+-]%{HOUR}(?::?%{MINUTE})))"},
      {"TIMESTAMP_ISO8601", R"(%{YEAR}-%{MONTHNUM}-%{MONTHDAY}[T ]%{HOUR}:?%{MINUTE}(?::?%{SECOND})?%{ISO8601_TIMEZONE}?)"},
      {"DATE", R"(%{YEAR}[/-]%{MONTHNUM}[/-]%{MONTHDAY})"},
      {"HTTPDATE", R"(%{MONTHDAY}/%{MONTH}/%{YEAR}:%{TIME} [+-]\d{4})"},
      {"LOGLEVEL", R"((?:[Aa]lert|ALERT|[Tt]race|TRACE|[Dd]ebug|DEBUG|[Nn]otice|NOTICE|[Ii]nfo|INFO|[Ww]arn(?:ing)?|WARN(?:ING)?|[Ee]rr(?:or)?|ERR(?:OR)?|[Cc]rit(?:ical)?|CRIT(?:ICAL)?|[Ff]atal|FATAL|[Ss]evere|SEVERE|EMERG(?:ENCY)?|[Ee]merg(?:ency)?))"},
  };
  return kPatterns;
}

DataType GrokType(const std::string& type) {
  std::string t = ToLower(type);
  if (t == "int") return DataType::Of(DataType::Kind::kInt);
  if (t == "long" || t == "bigint") return DataType::Of(DataType::Kind::kBigint);
  if (t == "float" || t == "double") return DataType::Of(DataType::Kind::kDouble);
  if (t == "boolean") return DataType::Of(DataType::Kind::kBoolean);
  return DataType::Of(DataType::Kind::kString);
}

constexpr size_t kMaxExpansion = 64 * 1024;

Status Expand(const std::string& pattern, const std::map<std::string, std::string>& custom, int depth,
              std::string* out, Schema* schema) {
  if (depth > 32) return Status::InvalidInput("grok pattern: patterns nest too deep (a cycle?)");
  size_t i = 0;
  while (i < pattern.size()) {
    size_t open = pattern.find("%{", i);
    if (open == std::string::npos) {
      out->append(pattern, i, std::string::npos);
      break;
    }
    out->append(pattern, i, open - i);
    size_t close = pattern.find('}', open);
    if (close == std::string::npos) return Status::InvalidInput("grok pattern: unclosed %{ in '" + pattern + "'");
    std::vector<std::string> parts = Split(pattern.substr(open + 2, close - open - 2), ':');
    const std::string& name = parts[0];
    auto it = custom.find(name);
    const std::string* body = nullptr;
    if (it != custom.end()) body = &it->second;
    else if (BuiltinPatterns().count(name)) body = &BuiltinPatterns().at(name);
    if (body == nullptr) return Status::InvalidInput("grok pattern: unknown pattern %{" + name + "}");
    // Only the outermost named captures are columns; nested names are plain groups.
    if (parts.size() >= 2 && !parts[1].empty() && schema != nullptr) {
      std::string field = parts[1];
      for (char& c : field)
        if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '_')) c = '_';
      *out += "(?P<" + field + ">";
      schema->push_back(Column{parts[1], GrokType(parts.size() >= 3 ? parts[2] : "string")});
      OG_RETURN_NOT_OK(Expand(*body, custom, depth + 1, out, nullptr));
      *out += ")";
    } else {
      *out += "(?:";
      OG_RETURN_NOT_OK(Expand(*body, custom, depth + 1, out, nullptr));
      *out += ")";
    }
    if (out->size() > kMaxExpansion) return Status::InvalidInput("grok pattern: expands past 64 KiB");
    i = close + 1;
  }
  return Status::OK();
}

}  // namespace

struct GrokPattern::Impl {
  std::unique_ptr<RE2> regex;
  Schema schema;
};

GrokPattern::GrokPattern() : impl_(std::make_unique<Impl>()) {}
GrokPattern::GrokPattern(GrokPattern&&) noexcept = default;
GrokPattern& GrokPattern::operator=(GrokPattern&&) noexcept = default;
GrokPattern::~GrokPattern() = default;

Result<GrokPattern> GrokPattern::Make(const std::string& pattern, const std::string& custom_patterns) {
  std::map<std::string, std::string> custom;
  for (const std::string& raw : Split(custom_patterns, '\n')) {
    std::string line = Trim(raw);
    if (line.empty() || line[0] == '#') continue;
    size_t space = line.find_first_of(" \t");
    if (space == std::string::npos) return Status::InvalidInput("grok custom pattern without a body: '" + line + "'");
    custom[line.substr(0, space)] = Trim(line.substr(space + 1));
  }
  GrokPattern out;
  std::string regex;
  OG_RETURN_NOT_OK(Expand(pattern, custom, 0, &regex, &out.impl_->schema));
  RE2::Options options;
  options.set_log_errors(false);
  options.set_max_mem(8 << 20);
  out.impl_->regex = std::make_unique<RE2>(regex, options);
  if (!out.impl_->regex->ok()) return Status::InvalidInput("grok pattern: " + out.impl_->regex->error());
  if (out.impl_->schema.empty()) return Status::InvalidInput("grok pattern names no field (%{PATTERN:field})");
  return out;
}

const Schema& GrokPattern::schema() const { return impl_->schema; }

bool GrokPattern::Matches(std::string_view line) const {
  return RE2::FullMatch(re2::StringPiece(line.data(), line.size()), *impl_->regex);
}

Result<TextSample> InferGrok(std::string_view text, bool complete, const GrokPattern& pattern,
                             const std::string& classification) {
  if (text.find('\0') != std::string_view::npos || !IsValidUtf8(text.substr(0, text.rfind('\n') + 1)))
    return Status::InvalidInput("binary content (not UTF-8 text)");
  std::string_view lines = complete ? text : text.substr(0, text.rfind('\n') == std::string_view::npos
                                                               ? 0 : text.rfind('\n') + 1);
  TextSample out;
  out.classification = classification;
  out.schema = pattern.schema();
  size_t pos = 0;
  while (pos < lines.size() && out.records < kSampleRecords) {
    size_t nl = lines.find('\n', pos);
    size_t end = nl == std::string_view::npos ? lines.size() : nl;
    std::string_view line = lines.substr(pos, end - pos);
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    pos = end + 1;
    if (Trim(line).empty()) continue;
    if (!pattern.Matches(line)) return Status::InvalidInput("a line does not match the grok pattern");
    ++out.records;
    out.sample_bytes = static_cast<int64_t>(std::min(pos, lines.size()));
  }
  if (out.records == 0) return Status::InvalidInput("no line to match the grok pattern");
  return out;
}

}  // namespace openglue::crawler
