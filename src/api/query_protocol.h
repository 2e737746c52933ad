// The AWS query protocol's wire format, as IAM and STS speak it: a form-encoded request body
// (`Action=GetRole&Version=2010-05-08&RoleName=etl`) and XML answers. Router::HandleQuery
// routes such requests; api/identity_operations.h has the operations.
#pragma once

#include <map>
#include <string>
#include <string_view>

#include "common/status.h"

namespace openglue::api {

// Whether a Content-Type header's value is a form (application/x-www-form-urlencoded, any
// parameters such as charset, any case).
bool IsFormContentType(std::string_view content_type);

// The fields of a form-encoded body: `+` is a blank, %XX escapes are decoded; a field without
// `=` has an empty value; a later field of the same name replaces an earlier one. Fails with
// Serialization when a name or value is not valid UTF-8.
Result<std::map<std::string, std::string>> ParseQueryForm(std::string_view body);

// `text` escaped for XML character data and attribute values (& < > " '); control characters
// XML 1.0 cannot hold are written as U+FFFD.
std::string XmlEscape(std::string_view text);

// `text` percent-encoded as RFC 3986 unreserved characters only (IAM's policy documents).
std::string PercentEncode(std::string_view text);

// The query-protocol error code and HTTP status for a Status (IAM's and STS's names).
struct QueryError {
  const char* code;
  int http_status;
};
QueryError QueryErrorFor(StatusCode code);

}  // namespace openglue::api
