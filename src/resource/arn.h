// Amazon Resource Names of Glue resources: arn:<partition>:glue:<region>:<account>:<resource>,
// where <resource> is a type and names separated by '/' (database/<db>, table/<db>/<table>,
// job/<name>).
#pragma once

#include <string>
#include <vector>

#include "common/status.h"

namespace openglue::resource {

struct Arn {
  std::string partition = "aws";
  std::string service = "glue";
  std::string region;
  std::string account_id;
  // The resource part split on '/': {"table", "<db>", "<table>"}. Never empty after Parse.
  std::vector<std::string> resource;

  // InvalidInput for anything that is not a Glue ARN with an account and a resource type.
  static Result<Arn> Parse(const std::string& text);
  const std::string& type() const { return resource.front(); }
  std::string ToString() const;
};

// arn:aws:glue:<region>:<account>:<parts joined by '/'>.
std::string GlueArn(const std::string& region, const std::string& account_id,
                    const std::vector<std::string>& resource);

}  // namespace openglue::resource
