#include "api/query_protocol.h"

#include <cctype>

#include "common/strings.h"

namespace openglue::api {

bool IsFormContentType(std::string_view content_type) {
  std::string type = ToLower(Trim(content_type.substr(0, content_type.find(';'))));
  return type == "application/x-www-form-urlencoded";
}

namespace {

std::string DecodeFormPart(std::string_view part) {
  std::string plus(part);
  for (char& c : plus)
    if (c == '+') c = ' ';
  return PercentDecode(plus);
}

}  // namespace

Result<std::map<std::string, std::string>> ParseQueryForm(std::string_view body) {
  std::map<std::string, std::string> fields;
  size_t start = 0;
  while (start <= body.size()) {
    size_t end = body.find('&', start);
    if (end == std::string_view::npos) end = body.size();
    std::string_view field = body.substr(start, end - start);
    if (!field.empty()) {
      size_t eq = field.find('=');
      std::string name = DecodeFormPart(field.substr(0, eq));
      std::string value = eq == std::string_view::npos ? "" : DecodeFormPart(field.substr(eq + 1));
      if (!IsValidUtf8(name) || !IsValidUtf8(value))
        return Status::Serialization("The request body is not valid UTF-8 form data");
      fields[std::move(name)] = std::move(value);
    }
    start = end + 1;
  }
  return fields;
}

std::string XmlEscape(std::string_view text) {
  std::string clean = SanitizeUtf8(text);
  std::string out;
  out.reserve(clean.size());
  for (char c : clean) {
    switch (c) {
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '"': out += "&quot;"; break;
      case '\'': out += "&apos;"; break;
      default:
        if (static_cast<unsigned char>(c) < 0x20 && c != '\t' && c != '\n' && c != '\r')
          out += "\xEF\xBF\xBD";
        else
          out.push_back(c);
    }
  }
  return out;
}

std::string PercentEncode(std::string_view text) {
  static const char kHex[] = "0123456789ABCDEF";
  std::string out;
  for (unsigned char c : text) {
    if (std::isalnum(c) || c == '-' || c == '_' || c == '.' || c == '~') {
      out.push_back(static_cast<char>(c));
    } else {
      out.push_back('%');
      out.push_back(kHex[c >> 4]);
      out.push_back(kHex[c & 15]);
    }
  }
  return out;
}

QueryError QueryErrorFor(StatusCode code) {
  switch (code) {
    case StatusCode::kEntityNotFound: return {"NoSuchEntity", 404};
    case StatusCode::kInvalidInput:
    case StatusCode::kValidation:
    case StatusCode::kSerialization: return {"ValidationError", 400};
    case StatusCode::kUnknownOperation: return {"InvalidAction", 400};
    case StatusCode::kAccessDenied: return {"AccessDenied", 403};
    case StatusCode::kMissingAuthenticationToken: return {"MissingAuthenticationToken", 403};
    case StatusCode::kIncompleteSignature: return {"IncompleteSignature", 400};
    case StatusCode::kInvalidSignature: return {"SignatureDoesNotMatch", 403};
    case StatusCode::kUnrecognizedClient: return {"InvalidClientTokenId", 403};
    default: return {"ServiceFailure", 500};
  }
}

}  // namespace openglue::api
