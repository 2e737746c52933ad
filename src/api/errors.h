// The one table that maps a Status code onto the wire: Glue's error name (`__type`) and the
// HTTP status AWS answers with.
#pragma once

#include "common/status.h"

namespace openglue::api {

struct WireError {
  const char* type;  // e.g. "EntityNotFoundException"
  int http_status;   // e.g. 400
};

WireError ToWireError(StatusCode code);

}  // namespace openglue::api
