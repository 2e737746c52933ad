#include "catalog/catalog_util.h"

#include <regex>

#include "common/strings.h"

namespace openglue::catalog {

std::string GetString(const Json& request, const char* member, const std::string& fallback) {
  auto it = request.find(member);
  if (it == request.end() || !it->is_string()) return fallback;
  return it->get<std::string>();
}

std::string GetName(const Json& request, const char* member) {
  return ToLower(GetString(request, member));
}

Result<std::string> PartitionValueKey(const Json& values) {
  if (!values.is_array()) return Status::InvalidInput("Partition Values must be a list of strings");
  std::string key;
  bool first = true;
  for (const Json& v : values) {
    if (!v.is_string()) return Status::InvalidInput("Partition Values must be a list of strings");
    const std::string& s = v.get_ref<const std::string&>();
    if (s.find(store::kKeySep) != std::string::npos || s.find(kColumnSep) != std::string::npos)
      return Status::InvalidInput("Partition value contains a control character (0x1E or 0x1F)");
    if (!first) key.push_back(store::kKeySep);
    key += s;
    first = false;
  }
  return key;
}

std::vector<std::string_view> SplitValueKey(std::string_view value_key) {
  std::vector<std::string_view> parts;
  size_t start = 0;
  while (true) {
    size_t pos = value_key.find(store::kKeySep, start);
    if (pos == std::string_view::npos) {
      parts.push_back(value_key.substr(start));
      return parts;
    }
    parts.push_back(value_key.substr(start, pos - start));
    start = pos + 1;
  }
}

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
  auto it = request.find("MaxResults");
  if (it == request.end() || !it->is_number_integer()) return fallback;
  return it->get<int64_t>();
}

Json ErrorDetail(const Status& status) {
  return Json{{"ErrorCode", GlueErrorName(status.code())}, {"ErrorMessage", status.message()}};
}

Result<Json> ParseDoc(const std::string& doc) {
  Json parsed = Json::parse(doc, nullptr, /*allow_exceptions=*/false);
  if (parsed.is_discarded()) return Status::Internal("corrupt catalog document in the store");
  return parsed;
}

Result<Json> LoadDatabase(store::Transaction* txn, const std::string& catalog_id,
                          const std::string& database) {
  OG_ASSIGN_OR_RETURN(auto doc, txn->Get(kDatabase, store::MakeKey({catalog_id, database})));
  if (!doc) return Status::EntityNotFound("Database " + database + " not found.");
  return ParseDoc(*doc);
}

Result<Json> LoadTable(store::Transaction* txn, const std::string& catalog_id,
                       const std::string& database, const std::string& table) {
  OG_ASSIGN_OR_RETURN(auto doc, txn->Get(kTable, store::MakeKey({catalog_id, database, table})));
  if (!doc) {
    OG_ASSIGN_OR_RETURN(auto db, txn->Get(kDatabase, store::MakeKey({catalog_id, database})));
    if (!db) return Status::EntityNotFound("Database " + database + " not found.");
    return Status::EntityNotFound("Table " + table + " not found.");
  }
  return ParseDoc(*doc);
}

struct NamePattern::Impl {
  std::regex regex;
  bool match_all = false;
};

Result<NamePattern> NamePattern::Make(const std::string& pattern) {
  auto impl = std::make_shared<Impl>();
  if (pattern.empty() || pattern == "*") {
    impl->match_all = true;
  } else {
    std::string translated;
    for (size_t i = 0; i < pattern.size(); ++i) {
      char c = pattern[i];
      // A '*' not preceded by a regex atom is Hive's wildcard; ".*" stays a regex.
      if (c == '*' && (i == 0 || pattern[i - 1] != '.')) translated += ".*";
      else translated.push_back(c);
    }
    try {
      impl->regex = std::regex(translated, std::regex::ECMAScript | std::regex::icase |
                                               std::regex::optimize);
    } catch (const std::regex_error& e) {
      return Status::InvalidInput("Invalid name pattern '" + pattern + "': " + e.what());
    }
  }
  NamePattern result;
  result.impl_ = std::move(impl);
  return result;
}

bool NamePattern::Matches(const std::string& name) const {
  if (impl_->match_all) return true;
  try {
    return std::regex_match(name, impl_->regex);
  } catch (const std::regex_error&) {
    return false;  // too complex to evaluate: treated as no match
  }
}

}  // namespace openglue::catalog

namespace openglue::catalog {

Result<Page> ScanPage(store::Transaction* txn, std::string_view kind, const std::string& prefix,
                      const Json& request, int64_t limit,
                      const std::function<Result<bool>(const store::Row&)>& keep) {
  OG_ASSIGN_OR_RETURN(std::string after, DecodeToken(request, prefix));
  Page page;
  constexpr int64_t kChunk = 512;
  while (true) {
    store::ScanOptions scan{prefix, after, kChunk, false};
    OG_ASSIGN_OR_RETURN(auto rows, txn->Scan(kind, scan));
    for (auto& row : rows) {
      after = row.key;
      OG_ASSIGN_OR_RETURN(bool kept, keep(row));
      if (!kept) continue;
      if (static_cast<int64_t>(page.rows.size()) == limit) {
        // One more match exists past the page: hand out a token to the page's last row.
        page.next_token = EncodeToken(page.rows.back().key);
        return page;
      }
      page.rows.push_back(std::move(row));
    }
    if (static_cast<int64_t>(rows.size()) < kChunk) return page;
  }
}

std::string VersionKey(int64_t version) {
  std::string digits = std::to_string(version);
  return std::string(digits.size() < 12 ? 12 - digits.size() : 0, '0') + digits;
}

std::string DatabaseArn(const std::string& region, const std::string& catalog_id,
                        const std::string& database) {
  return "arn:aws:glue:" + region + ":" + catalog_id + ":database/" + database;
}

std::string TableArn(const std::string& region, const std::string& catalog_id,
                     const std::string& database, const std::string& table) {
  return "arn:aws:glue:" + region + ":" + catalog_id + ":table/" + database + "/" + table;
}

std::string FunctionArn(const std::string& region, const std::string& catalog_id,
                        const std::string& database, const std::string& function) {
  return "arn:aws:glue:" + region + ":" + catalog_id + ":userDefinedFunction/" + database + "/" +
         function;
}

Status DeleteTableContents(store::Transaction* txn, const std::string& region,
                           const std::string& catalog_id, const std::string& database,
                           const std::string& table) {
  std::string prefix = store::PrefixOf({catalog_id, database, table});
  for (std::string_view kind : {kTableVersion, kPartition, kPartitionIndex, kPartitionIndexEntry,
                                kTableColumnStats, kPartitionColumnStats}) {
    OG_RETURN_NOT_OK(txn->DeletePrefix(kind, prefix).status());
  }
  OG_RETURN_NOT_OK(txn->Delete(kTable, store::MakeKey({catalog_id, database, table})).status());
  OG_RETURN_NOT_OK(txn->Delete(kTags, TableArn(region, catalog_id, database, table)).status());
  return Status::OK();
}

}  // namespace openglue::catalog
