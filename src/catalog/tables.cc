// Tables and table versions: CreateTable, GetTable, GetTables, UpdateTable, DeleteTable,
// BatchDeleteTable, GetTableVersion(s), (Batch)DeleteTableVersion, SearchTables.
#include <algorithm>
#include <cctype>

#include "catalog/catalog.h"
#include "catalog/catalog_util.h"
#include "common/strings.h"

namespace openglue::catalog {
namespace {

// The stored Table document from a TableInput.
Json TableFromInput(const Json& input, const std::string& catalog_id, const std::string& database,
                    double create_time, double update_time, int64_t version) {
  Json table = Json::object();
  table["Name"] = GetName(input, "Name");
  table["DatabaseName"] = database;
  for (const char* member :
       {"Description", "Owner", "LastAccessTime", "LastAnalyzedTime", "Retention",
        "StorageDescriptor", "PartitionKeys", "ViewOriginalText", "ViewExpandedText", "TableType",
        "Parameters", "TargetTable", "ViewDefinition"}) {
    if (input.contains(member) && !input[member].is_null()) table[member] = input[member];
  }
  if (!table.contains("PartitionKeys")) table["PartitionKeys"] = Json::array();
  if (!table.contains("Retention")) table["Retention"] = 0;
  table["CreateTime"] = create_time;
  table["UpdateTime"] = update_time;
  table["IsRegisteredWithLakeFormation"] = false;
  table["CatalogId"] = catalog_id;
  table["VersionId"] = std::to_string(version);
  return table;
}

Status CheckPartitionKeys(const Json& table) {
  std::vector<std::string> seen;
  for (const Json& key : table["PartitionKeys"]) {
    std::string name = ToLower(GetString(key, "Name"));
    if (std::find(seen.begin(), seen.end(), name) != seen.end())
      return Status::InvalidInput("Duplicate partition key '" + name + "'");
    seen.push_back(name);
  }
  return Status::OK();
}

// A VersionId as a number; InvalidInput unless it is a whole non-negative decimal.
Result<int64_t> ParseVersionId(const std::string& version_id) {
  try {
    size_t used = 0;
    int64_t version = std::stoll(version_id, &used);
    if (used == version_id.size() && version >= 0) return version;
  } catch (const std::exception&) {
  }
  return Status::InvalidInput("VersionId '" + version_id + "' is not a version number");
}

int64_t CurrentVersion(const Json& table) {
  try {
    return std::stoll(GetString(table, "VersionId", "0"));
  } catch (const std::exception&) {
    return 0;
  }
}

// Partition index entries hold each value in the canonical text of its key's type, so when
// UpdateTable changes the partition keys, every index of the table is rebuilt for the new keys.
// InvalidInput, naming the index, when an indexed key is gone or no longer indexable.
Status RebuildPartitionIndexes(store::Transaction* txn, const std::string& catalog_id,
                               const Json& table) {
  std::string database = GetString(table, "DatabaseName");
  std::string name = GetString(table, "Name");
  std::string prefix = store::PrefixOf({catalog_id, database, name});
  OG_ASSIGN_OR_RETURN(auto rows, txn->Scan(kPartitionIndex, store::ScanOptions{prefix, "", -1, false}));
  for (const auto& row : rows) {
    OG_ASSIGN_OR_RETURN(Json descriptor, ParseDoc(row.doc));
    std::string index_name = row.key.substr(prefix.size());
    Json keys = Json::array();
    for (const Json& key : descriptor.value("Keys", Json::array())) keys.push_back(GetString(key, "Name"));
    OG_RETURN_NOT_OK(txn->Delete(kPartitionIndex, row.key).status());
    OG_RETURN_NOT_OK(txn->DeletePrefix(kPartitionIndexEntry,
                                    store::PrefixOf({catalog_id, database, name, index_name})).status());
    Status st = CreatePartitionIndexInTxn(txn, catalog_id, table,
                                          Json{{"IndexName", index_name}, {"Keys", keys}});
    if (st.code() == StatusCode::kInvalidInput)
      return Status::InvalidInput("The new partition keys do not suit partition index " + index_name +
                                  " (" + st.message() + "); delete the index first");
    OG_RETURN_NOT_OK(st);
  }
  return Status::OK();
}

Json OnlyAttributes(const Json& table, const Json& request) {
  if (!request.contains("AttributesToGet")) return table;
  Json out = Json::object();
  out["Name"] = table["Name"];
  for (const Json& a : request["AttributesToGet"]) {
    if (a == "TABLE_TYPE" && table.contains("TableType")) out["TableType"] = table["TableType"];
  }
  return out;
}

}  // namespace

Result<Json> Catalog::CreateTable(const Json& request) {
  std::string catalog_id = GetString(request, "CatalogId", options_.account_id);
  std::string database = GetName(request, "DatabaseName");
  // The model makes TableInput optional (OpenTableFormatInput is the alternative, which
  // OpenGlue does not implement): without it there is nothing to create.
  if (!request.contains("TableInput"))
    return Status::InvalidInput("TableInput is required (OpenTableFormatInput is not supported)");
  double now = clock_->NowSeconds();
  Json table = TableFromInput(request.at("TableInput"), catalog_id, database, now, now, 0);
  std::string name = table["Name"];
  OG_RETURN_NOT_OK(CheckPartitionKeys(table));
  OG_ASSIGN_OR_RETURN(auto txn, store_->BeginWrite());
  OG_RETURN_NOT_OK(LoadDatabase(txn.get(), catalog_id, database).status());
  std::string key = store::MakeKey({catalog_id, database, name});
  Status st = txn->Insert(kTable, key, DumpJson(table));
  if (st.code() == StatusCode::kAlreadyExists) return Status::AlreadyExists("Table already exists.");
  OG_RETURN_NOT_OK(st);
  OG_RETURN_NOT_OK(txn->Put(kTableVersion, store::MakeKey({catalog_id, database, name, VersionKey(0)}),
                         DumpJson(table)));
  if (request.contains("PartitionIndexes")) {
    if (request["PartitionIndexes"].size() > 3)
      return Status::ResourceNumberLimitExceeded("A table can have at most 3 partition indexes");
    for (const Json& index : request["PartitionIndexes"])
      OG_RETURN_NOT_OK(CreatePartitionIndexInTxn(txn.get(), catalog_id, table, index));
  }
  OG_RETURN_NOT_OK(txn->Commit());
  return Json::object();
}

Result<Json> Catalog::GetTable(const Json& request) {
  std::string catalog_id = GetString(request, "CatalogId", options_.account_id);
  OG_ASSIGN_OR_RETURN(auto txn, store_->BeginRead());
  OG_ASSIGN_OR_RETURN(Json table, LoadTable(txn.get(), catalog_id, GetName(request, "DatabaseName"),
                                         GetName(request, "Name")));
  return Json{{"Table", std::move(table)}};
}

Result<std::string> Catalog::GetTableResponse(const Json& request) {
  std::string catalog_id = GetString(request, "CatalogId", options_.account_id);
  std::string database = GetName(request, "DatabaseName");
  std::string name = GetName(request, "Name");
  std::string doc;
  {
    OG_ASSIGN_OR_RETURN(auto txn, store_->BeginRead());
    OG_ASSIGN_OR_RETURN(doc, LoadTableDocument(txn.get(), catalog_id, database, name));
  }
  std::string key = store::MakeKey({catalog_id, database, name});
  if (std::optional<std::string> body = table_responses_.Find(key, doc)) return std::move(*body);
  OG_ASSIGN_OR_RETURN(Json table, ParseDoc(doc));
  std::string body = DumpJson(Json{{"Table", std::move(table)}});
  table_responses_.Put(key, std::move(doc), body);
  return body;
}

Result<Json> Catalog::GetTables(const Json& request) {
  std::string catalog_id = GetString(request, "CatalogId", options_.account_id);
  std::string database = GetName(request, "DatabaseName");
  OG_ASSIGN_OR_RETURN(NamePattern pattern, NamePattern::Make(GetString(request, "Expression")));
  OG_ASSIGN_OR_RETURN(auto txn, store_->BeginRead());
  OG_RETURN_NOT_OK(LoadDatabase(txn.get(), catalog_id, database).status());
  std::string prefix = store::PrefixOf({catalog_id, database});
  OG_ASSIGN_OR_RETURN(Page page, ScanPage(txn.get(), kTable, prefix, request, PageSize(request, 100),
                                       [&](const store::Row& row) -> Result<bool> {
                                         return pattern.Matches(row.key.substr(prefix.size()));
                                       }));
  Json list = Json::array();
  for (const auto& row : page.rows) {
    OG_ASSIGN_OR_RETURN(Json table, ParseDoc(row.doc));
    list.push_back(OnlyAttributes(table, request));
  }
  Json response{{"TableList", std::move(list)}};
  if (!page.next_token.empty()) response["NextToken"] = page.next_token;
  return response;
}

Result<Json> Catalog::UpdateTable(const Json& request) {
  std::string catalog_id = GetString(request, "CatalogId", options_.account_id);
  std::string database = GetName(request, "DatabaseName");
  // Optional in the model (UpdateOpenTableFormatInput is the alternative, not implemented);
  // found by request_fuzz: a request without it gave HTTP 500.
  if (!request.contains("TableInput"))
    return Status::InvalidInput("TableInput is required (UpdateOpenTableFormatInput is not supported)");
  const Json& input = request.at("TableInput");
  std::string name = GetName(input, "Name");
  bool skip_archive = request.value("SkipArchive", false);
  OG_ASSIGN_OR_RETURN(auto txn, store_->BeginWrite());
  OG_ASSIGN_OR_RETURN(Json old, LoadTable(txn.get(), catalog_id, database, name));
  int64_t version = CurrentVersion(old);
  if (request.contains("VersionId") && GetString(request, "VersionId") != std::to_string(version))
    return Status::ConcurrentModification(
        "Update table failed due to concurrent modifications: VersionId " +
        GetString(request, "VersionId") + " is not the current version " + std::to_string(version));
  Json table = TableFromInput(input, catalog_id, database, old.value("CreateTime", 0.0),
                              clock_->NowSeconds(), version + 1);
  OG_RETURN_NOT_OK(CheckPartitionKeys(table));
  if (table["PartitionKeys"] != old.value("PartitionKeys", Json::array()))
    OG_RETURN_NOT_OK(RebuildPartitionIndexes(txn.get(), catalog_id, table));
  std::string version_prefix_key = store::MakeKey({catalog_id, database, name, VersionKey(version)});
  if (skip_archive) OG_RETURN_NOT_OK(txn->Delete(kTableVersion, version_prefix_key).status());
  OG_RETURN_NOT_OK(txn->Put(kTable, store::MakeKey({catalog_id, database, name}), DumpJson(table)));
  OG_RETURN_NOT_OK(txn->Put(kTableVersion,
                         store::MakeKey({catalog_id, database, name, VersionKey(version + 1)}),
                         DumpJson(table)));
  OG_RETURN_NOT_OK(txn->Commit());
  return Json::object();
}

Result<Json> Catalog::DeleteTable(const Json& request) {
  std::string catalog_id = GetString(request, "CatalogId", options_.account_id);
  std::string database = GetName(request, "DatabaseName");
  std::string name = GetName(request, "Name");
  OG_ASSIGN_OR_RETURN(auto txn, store_->BeginWrite());
  OG_RETURN_NOT_OK(LoadTable(txn.get(), catalog_id, database, name).status());
  OG_RETURN_NOT_OK(DeleteTableContents(txn.get(), options_.region, catalog_id, database, name));
  OG_RETURN_NOT_OK(txn->Commit());
  return Json::object();
}

Result<Json> Catalog::BatchDeleteTable(const Json& request) {
  std::string catalog_id = GetString(request, "CatalogId", options_.account_id);
  std::string database = GetName(request, "DatabaseName");
  OG_ASSIGN_OR_RETURN(auto txn, store_->BeginWrite());
  Json errors = Json::array();
  for (const Json& entry : request.at("TablesToDelete")) {
    std::string name = ToLower(entry.get<std::string>());
    Status st = LoadTable(txn.get(), catalog_id, database, name).status();
    if (st.ok()) st = DeleteTableContents(txn.get(), options_.region, catalog_id, database, name);
    OG_RETURN_NOT_OK(RecordItemError(st, {{"TableName", name}}, &errors));
  }
  OG_RETURN_NOT_OK(txn->Commit());
  return Json{{"Errors", std::move(errors)}};
}

Result<Json> Catalog::GetTableVersion(const Json& request) {
  std::string catalog_id = GetString(request, "CatalogId", options_.account_id);
  std::string database = GetName(request, "DatabaseName");
  std::string name = GetName(request, "TableName");
  OG_ASSIGN_OR_RETURN(auto txn, store_->BeginRead());
  OG_ASSIGN_OR_RETURN(Json table, LoadTable(txn.get(), catalog_id, database, name));
  std::string version_id = GetString(request, "VersionId", GetString(table, "VersionId", "0"));
  OG_ASSIGN_OR_RETURN(int64_t version, ParseVersionId(version_id));
  OG_ASSIGN_OR_RETURN(auto doc, txn->Get(kTableVersion, store::MakeKey({catalog_id, database, name,
                                                                     VersionKey(version)})));
  if (!doc) return Status::EntityNotFound("Version " + version_id + " of table " + name + " not found.");
  OG_ASSIGN_OR_RETURN(Json snapshot, ParseDoc(*doc));
  return Json{{"TableVersion", {{"Table", std::move(snapshot)}, {"VersionId", version_id}}}};
}

Result<Json> Catalog::GetTableVersions(const Json& request) {
  std::string catalog_id = GetString(request, "CatalogId", options_.account_id);
  std::string database = GetName(request, "DatabaseName");
  std::string name = GetName(request, "TableName");
  OG_ASSIGN_OR_RETURN(auto txn, store_->BeginRead());
  OG_RETURN_NOT_OK(LoadTable(txn.get(), catalog_id, database, name).status());
  std::string prefix = store::PrefixOf({catalog_id, database, name});
  OG_ASSIGN_OR_RETURN(Page page, ScanPage(txn.get(), kTableVersion, prefix, request,
                                       PageSize(request, 100),
                                       [](const store::Row&) -> Result<bool> { return true; }));
  Json list = Json::array();
  for (const auto& row : page.rows) {
    OG_ASSIGN_OR_RETURN(Json snapshot, ParseDoc(row.doc));
    std::string version_id = GetString(snapshot, "VersionId", "0");
    list.push_back({{"Table", std::move(snapshot)}, {"VersionId", version_id}});
  }
  Json response{{"TableVersions", std::move(list)}};
  if (!page.next_token.empty()) response["NextToken"] = page.next_token;
  return response;
}

namespace {

Status DeleteOneVersion(store::Transaction* txn, const std::string& catalog_id,
                        const std::string& database, const std::string& name,
                        const Json& table, const std::string& version_id) {
  OG_ASSIGN_OR_RETURN(int64_t version, ParseVersionId(version_id));
  if (version == CurrentVersion(table))
    return Status::InvalidInput("Version " + version_id + " is the current version of table " +
                                name + " and cannot be deleted");
  OG_ASSIGN_OR_RETURN(bool existed, txn->Delete(kTableVersion, store::MakeKey({catalog_id, database, name,
                                                                           VersionKey(version)})));
  if (!existed) return Status::EntityNotFound("Version " + version_id + " of table " + name + " not found.");
  return Status::OK();
}

}  // namespace

Result<Json> Catalog::DeleteTableVersion(const Json& request) {
  std::string catalog_id = GetString(request, "CatalogId", options_.account_id);
  std::string database = GetName(request, "DatabaseName");
  std::string name = GetName(request, "TableName");
  OG_ASSIGN_OR_RETURN(auto txn, store_->BeginWrite());
  OG_ASSIGN_OR_RETURN(Json table, LoadTable(txn.get(), catalog_id, database, name));
  OG_RETURN_NOT_OK(DeleteOneVersion(txn.get(), catalog_id, database, name, table,
                                 GetString(request, "VersionId")));
  OG_RETURN_NOT_OK(txn->Commit());
  return Json::object();
}

Result<Json> Catalog::BatchDeleteTableVersion(const Json& request) {
  std::string catalog_id = GetString(request, "CatalogId", options_.account_id);
  std::string database = GetName(request, "DatabaseName");
  std::string name = GetName(request, "TableName");
  OG_ASSIGN_OR_RETURN(auto txn, store_->BeginWrite());
  OG_ASSIGN_OR_RETURN(Json table, LoadTable(txn.get(), catalog_id, database, name));
  Json errors = Json::array();
  for (const Json& v : request.at("VersionIds")) {
    std::string version_id = v.get<std::string>();
    Status st = DeleteOneVersion(txn.get(), catalog_id, database, name, table, version_id);
    OG_RETURN_NOT_OK(RecordItemError(st, {{"TableName", name}, {"VersionId", version_id}}, &errors));
  }
  OG_RETURN_NOT_OK(txn->Commit());
  return Json{{"Errors", std::move(errors)}};
}

namespace {

// A SearchText in double quotes asks for an exact match of a whole value, otherwise any
// value containing it matches.
bool TextMatches(const std::string& text, const std::string& needle, bool exact) {
  std::string lower = ToLower(text);
  return exact ? lower == needle : lower.find(needle) != std::string::npos;
}

bool ContainsText(const Json& value, const std::string& needle, bool exact) {
  return value.is_string() && TextMatches(value.get<std::string>(), needle, exact);
}

// SearchText matches a table's name, description, parameters, owner, table type and columns.
bool MatchesSearchText(const Json& table, std::string needle) {
  if (needle.empty()) return true;
  bool exact = needle.size() >= 2 && needle.front() == '"' && needle.back() == '"';
  if (exact) needle = needle.substr(1, needle.size() - 2);
  for (const char* member : {"Name", "DatabaseName", "Description", "Owner", "TableType"})
    if (table.contains(member) && ContainsText(table[member], needle, exact)) return true;
  if (table.contains("Parameters"))
    for (auto& [k, v] : table["Parameters"].items())
      if (TextMatches(k, needle, exact) || ContainsText(v, needle, exact)) return true;
  auto columns_match = [&](const Json& columns) {
    for (const Json& c : columns)
      if ((c.contains("Name") && ContainsText(c["Name"], needle, exact)) ||
          (c.contains("Comment") && ContainsText(c["Comment"], needle, exact)))
        return true;
    return false;
  };
  if (table.contains("PartitionKeys") && columns_match(table["PartitionKeys"])) return true;
  if (table.contains("StorageDescriptor") && table["StorageDescriptor"].contains("Columns") &&
      columns_match(table["StorageDescriptor"]["Columns"]))
    return true;
  return false;
}

// Lowercase tokens of `text`, split on every character that is not a letter or digit.
std::vector<std::string> Tokens(const std::string& text) {
  std::vector<std::string> tokens(1);
  for (char c : ToLower(text)) {
    if (std::isalnum(static_cast<unsigned char>(c)) || static_cast<unsigned char>(c) >= 0x80) {
      tokens.back().push_back(c);
    } else if (!tokens.back().empty()) {
      tokens.emplace_back();
    }
  }
  if (tokens.back().empty()) tokens.pop_back();
  return tokens;
}

// Glue's fuzzy match of string properties: the value's tokens appear, in order and adjacent,
// among the property's tokens ("link" matches "customer-link" but not "xxlinkyy").
bool TokensMatch(const std::string& actual, const std::string& value) {
  std::vector<std::string> haystack = Tokens(actual);
  std::vector<std::string> needle = Tokens(value);
  if (needle.empty()) return false;
  return std::search(haystack.begin(), haystack.end(), needle.begin(), needle.end()) !=
         haystack.end();
}

int Compare(const std::string& a, const std::string& b) {
  char* end_a = nullptr;
  char* end_b = nullptr;
  double x = std::strtod(a.c_str(), &end_a);
  double y = std::strtod(b.c_str(), &end_b);
  if (!a.empty() && !b.empty() && *end_a == 0 && *end_b == 0) return x < y ? -1 : (x > y ? 1 : 0);
  return a.compare(b) < 0 ? -1 : (a == b ? 0 : 1);
}

// One PropertyPredicate of SearchTables. Keys naming a table attribute compare that attribute;
// any other key compares the table parameter of that name.
bool MatchesFilter(const Json& table, const Json& filter) {
  std::string key = GetString(filter, "Key");
  std::string value = GetString(filter, "Value");
  std::string comparator = GetString(filter, "Comparator", "EQUALS");
  std::string actual;
  bool present = true;
  if (key == "DatabaseName" || key == "Name" || key == "Description" || key == "Owner" ||
      key == "TableType") {
    if (!table.contains(key)) return false;
    actual = table[key].get<std::string>();
    // Glue matches names and descriptions by token, not exactly.
    if ((key == "Name" || key == "Description") && comparator == "EQUALS")
      return TokensMatch(actual, value);
  } else if (key == "CreateTime" || key == "UpdateTime" || key == "LastAccessTime") {
    if (!table.contains(key)) return false;
    actual = std::to_string(table[key].get<double>());
  } else {
    present = table.contains("Parameters") && table["Parameters"].contains(key);
    if (!present) return false;
    actual = table["Parameters"][key].get<std::string>();
  }
  int c = Compare(actual, value);
  if (comparator == "EQUALS") return c == 0;
  if (comparator == "GREATER_THAN") return c > 0;
  if (comparator == "LESS_THAN") return c < 0;
  if (comparator == "GREATER_THAN_EQUALS") return c >= 0;
  if (comparator == "LESS_THAN_EQUALS") return c <= 0;
  return false;
}

}  // namespace

Result<Json> Catalog::SearchTables(const Json& request) {
  std::string catalog_id = GetString(request, "CatalogId", options_.account_id);
  std::string needle = ToLower(GetString(request, "SearchText"));
  const Json filters = request.value("Filters", Json::array());
  int64_t limit = PageSize(request, 100);
  int64_t offset = 0;
  std::string token = GetString(request, "NextToken");
  if (!token.empty()) {
    std::string decoded;
    bool ok = Base64Decode(token, &decoded) && StartsWith(decoded, "search:");
    if (ok) {
      try {
        offset = std::stoll(decoded.substr(7));
      } catch (const std::exception&) {
        ok = false;
      }
    }
    if (!ok || offset < 0) return Status::InvalidInput("Invalid NextToken");
  }
  OG_ASSIGN_OR_RETURN(auto txn, store_->BeginRead());
  store::ScanOptions scan{store::PrefixOf({catalog_id}), "", -1, false};
  OG_ASSIGN_OR_RETURN(auto rows, txn->Scan(kTable, scan));
  std::vector<Json> matches;
  for (const auto& row : rows) {
    OG_ASSIGN_OR_RETURN(Json table, ParseDoc(row.doc));
    if (!MatchesSearchText(table, needle)) continue;
    bool all = true;
    for (const Json& f : filters) all = all && MatchesFilter(table, f);
    if (all) matches.push_back(std::move(table));
  }
  if (request.contains("SortCriteria") && !request["SortCriteria"].empty()) {
    const Json& criterion = request["SortCriteria"][0];
    std::string field = GetString(criterion, "FieldName", "Name");
    bool descending = GetString(criterion, "Sort", "ASC") == "DESC";
    std::stable_sort(matches.begin(), matches.end(), [&](const Json& a, const Json& b) {
      std::string x = a.contains(field) ? DumpJson(a[field]) : "";
      std::string y = b.contains(field) ? DumpJson(b[field]) : "";
      return descending ? Compare(y, x) < 0 : Compare(x, y) < 0;
    });
  }
  Json list = Json::array();
  for (int64_t i = offset; i < static_cast<int64_t>(matches.size()) && i < offset + limit; ++i)
    list.push_back(std::move(matches[i]));
  Json response{{"TableList", std::move(list)}};
  if (offset + limit < static_cast<int64_t>(matches.size()))
    response["NextToken"] = Base64Encode("search:" + std::to_string(offset + limit));
  return response;
}

}  // namespace openglue::catalog
