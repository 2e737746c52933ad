// Reading back the JSON documents that the services keep in the metadata store (jobs, runs,
// crawlers, classifiers, triggers, workflows, bookmarks): one check for all of them.
#pragma once

#include <string>
#include <string_view>

#include "common/json.h"
#include "common/status.h"

namespace openglue::resource {

// The JSON object stored as `text`. A row that is not a JSON object (damaged, or written by
// something else) is Internal "The stored <what> cannot be read." (`what` names the row, e.g.
// "job nightly"): the caller's request fails, the row is left as it is. Never throws.
Result<Json> ParseStored(std::string_view text, const std::string& what);

}  // namespace openglue::resource
