// NextToken paging shared by every List/Get-many operation.
//
// A token is the opaque base64 of the last store key returned, so paging is stable while other
// clients write: every row that exists for the whole walk is returned exactly once, in key
// order. A page reads at most what it returns plus one more match (to know whether a token is
// needed), in bounded chunks, never the whole range.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "common/json.h"
#include "common/status.h"
#include "store/metadata_store.h"

namespace openglue::resource {

std::string EncodeToken(std::string_view last_key);
// The key after which the request's NextToken continues ("" without a token). The token must
// decode to a key inside `prefix`; InvalidInput otherwise (a token from another operation or
// another table).
Result<std::string> DecodeToken(const Json& request, std::string_view prefix);

// A page size from MaxResults, or `fallback` (also for a non-positive value).
int64_t PageSize(const Json& request, int64_t fallback);

// One page of a scan over `kind` under `prefix`, starting after the request's NextToken,
// keeping rows for which `keep` returns true, until `limit` rows are kept. `next_token` is set
// exactly when another kept row follows the page. Rows are read in chunks of at most
// min(limit + 1, 512): a page without a filter reads limit + 1 rows.
struct Page {
  std::vector<store::Row> rows;
  std::string next_token;
};
using KeepRow = std::function<Result<bool>(const store::Row&)>;
Result<Page> ScanPage(store::Transaction* txn, std::string_view kind, const std::string& prefix,
                      const Json& request, int64_t limit, const KeepRow& keep = nullptr);

// The response of a List* operation that returns names (ListJobs, ListCrawlers, ListTriggers,
// ListWorkflows): one page (`limit` keys) of the keys of `kind` that `keep` accepts, as the
// array `member`, with NextToken when more follow.
Result<Json> ListNames(store::Transaction* txn, std::string_view kind, const Json& request,
                       int64_t limit, const std::string& member, const KeepRow& keep = nullptr);

}  // namespace openglue::resource
