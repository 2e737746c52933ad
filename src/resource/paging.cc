#include "resource/paging.h"

#include <algorithm>

#include "common/strings.h"
#include "resource/request.h"

namespace openglue::resource {

std::string EncodeToken(std::string_view last_key) { return Base64Encode(last_key); }

Result<std::string> DecodeToken(const Json& request, std::string_view prefix) {
  std::string token = GetString(request, "NextToken");
  if (token.empty()) return std::string();
  std::string key;
  if (!Base64Decode(token, &key) || !StartsWith(key, prefix))
    return Status::InvalidInput("Invalid NextToken: it was not returned by this operation with these arguments");
  return key;
}

int64_t PageSize(const Json& request, int64_t fallback) {
  int64_t size = GetInt(request, "MaxResults", fallback);
  return size > 0 ? size : fallback;
}

Result<Page> ScanPage(store::Transaction* txn, std::string_view kind, const std::string& prefix,
                      const Json& request, int64_t limit, const KeepRow& keep) {
  OG_ASSIGN_OR_RETURN(std::string after, DecodeToken(request, prefix));
  if (limit < 1) limit = 1;
  constexpr int64_t kMaxChunk = 512;
  const int64_t chunk = std::min(kMaxChunk, limit + 1);
  Page page;
  while (true) {
    store::ScanOptions scan{prefix, after, chunk, false};
    OG_ASSIGN_OR_RETURN(auto rows, txn->Scan(kind, scan));
    for (auto& row : rows) {
      after = row.key;
      if (keep) {
        OG_ASSIGN_OR_RETURN(bool kept, keep(row));
        if (!kept) continue;
      }
      if (static_cast<int64_t>(page.rows.size()) == limit) {
        // One more match exists past the page: hand out a token to the page's last row.
        page.next_token = EncodeToken(page.rows.back().key);
        return page;
      }
      page.rows.push_back(std::move(row));
    }
    if (static_cast<int64_t>(rows.size()) < chunk) return page;
  }
}

Result<Json> ListNames(store::Transaction* txn, std::string_view kind, const Json& request,
                       int64_t limit, const std::string& member, const KeepRow& keep) {
  OG_ASSIGN_OR_RETURN(Page page, ScanPage(txn, kind, "", request, limit, keep));
  Json names = Json::array();
  for (const auto& row : page.rows) names.push_back(row.key);
  Json response{{member, std::move(names)}};
  if (!page.next_token.empty()) response["NextToken"] = page.next_token;
  return response;
}

}  // namespace openglue::resource
