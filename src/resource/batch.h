// The rule every Batch* operation follows, in one place so that they cannot drift apart:
//
// Each item is applied on its own. An item that fails with anything but Internal (not found,
// already exists, invalid input, ...) is reported for that item and the call itself succeeds.
// Internal means the store or the server failed: the outcome of the other items is unknown, so
// the whole call fails and its transaction is not committed.
#pragma once

#include "common/json.h"
#include "common/status.h"

namespace openglue::resource {

// {"ErrorCode": "<Glue error name>", "ErrorMessage": ...}, Glue's ErrorDetail shape.
Json ErrorDetail(const Status& status);

// Applies the rule to one item's outcome. Returns `item` when it must fail the whole call
// (Internal), OK otherwise. When the item failed, appends `entry` with `detail_member` set to
// ErrorDetail(item) to `errors`; with `errors` null (an operation whose response has no
// per-item error list, such as BatchGetPartition) the failed item is left out of the response.
Status RecordItemError(const Status& item, Json entry, Json* errors,
                       const char* detail_member = "ErrorDetail");

}  // namespace openglue::resource
