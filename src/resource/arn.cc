#include "resource/arn.h"

#include "common/strings.h"

namespace openglue::resource {

Result<Arn> Arn::Parse(const std::string& text) {
  // The resource part may itself contain ':' in other services' ARNs; Glue names cannot, but
  // split on the first five separators only so the message below stays accurate.
  std::vector<std::string> parts;
  size_t start = 0;
  for (int i = 0; i < 5; ++i) {
    size_t pos = text.find(':', start);
    if (pos == std::string::npos) break;
    parts.push_back(text.substr(start, pos - start));
    start = pos + 1;
  }
  if (parts.size() == 5) parts.push_back(text.substr(start));
  if (parts.size() != 6 || parts[0] != "arn" || parts[1].empty() || parts[2] != "glue" ||
      parts[4].empty() || parts[5].empty() || parts[5].find(':') != std::string::npos)
    return Status::InvalidInput("Invalid ARN '" + text +
                                "': expected arn:aws:glue:<region>:<account>:<resource>");
  Arn arn;
  arn.partition = parts[1];
  arn.service = parts[2];
  arn.region = parts[3];
  arn.account_id = parts[4];
  arn.resource = Split(parts[5], '/');
  if (arn.resource.empty() || arn.resource.front().empty())
    return Status::InvalidInput("Invalid ARN '" + text + "': no resource type");
  return arn;
}

std::string Arn::ToString() const {
  return "arn:" + partition + ":" + service + ":" + region + ":" + account_id + ":" +
         Join(resource, "/");
}

std::string GlueArn(const std::string& region, const std::string& account_id,
                    const std::vector<std::string>& resource) {
  return "arn:aws:glue:" + region + ":" + account_id + ":" + Join(resource, "/");
}

}  // namespace openglue::resource
