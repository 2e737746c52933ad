// Databases: CreateDatabase, GetDatabase, GetDatabases, UpdateDatabase, DeleteDatabase.
#include "catalog/catalog.h"
#include "catalog/catalog_util.h"

namespace openglue::catalog {
namespace {

const Json& DefaultPermissions() {
  static const Json kDefault = Json::array(
      {{{"Principal", {{"DataLakePrincipalIdentifier", "IAM_ALLOWED_PRINCIPALS"}}},
        {"Permissions", Json::array({"ALL"})}}});
  return kDefault;
}

// The stored Database document from a DatabaseInput.
Json DatabaseFromInput(const Json& input, const std::string& catalog_id, double create_time) {
  Json db = Json::object();
  db["Name"] = GetName(input, "Name");
  for (const char* member : {"Description", "LocationUri", "Parameters", "TargetDatabase",
                             "FederatedDatabase"}) {
    if (input.contains(member) && !input[member].is_null()) db[member] = input[member];
  }
  db["CreateTableDefaultPermissions"] = input.contains("CreateTableDefaultPermissions")
                                            ? input["CreateTableDefaultPermissions"]
                                            : DefaultPermissions();
  if (!db.contains("Parameters")) db["Parameters"] = Json::object();
  db["CreateTime"] = create_time;
  db["CatalogId"] = catalog_id;
  return db;
}

}  // namespace

Result<Json> Catalog::CreateDatabase(const Json& request) {
  std::string catalog_id = GetString(request, "CatalogId", options_.account_id);
  const Json& input = request.at("DatabaseInput");
  Json db = DatabaseFromInput(input, catalog_id, clock_->NowSeconds());
  std::string name = db["Name"];
  OG_ASSIGN_OR_RETURN(auto txn, store_->BeginWrite());
  Status st = txn->Insert(kDatabase, store::MakeKey({catalog_id, name}), DumpJson(db));
  if (st.code() == StatusCode::kAlreadyExists) return Status::AlreadyExists("Database already exists.");
  OG_RETURN_NOT_OK(st);
  if (request.contains("Tags"))
    OG_RETURN_NOT_OK(AddTags(txn.get(), DatabaseArn(options_.region, catalog_id, name), request["Tags"]));
  OG_RETURN_NOT_OK(txn->Commit());
  return Json::object();
}

Result<Json> Catalog::GetDatabase(const Json& request) {
  std::string catalog_id = GetString(request, "CatalogId", options_.account_id);
  OG_ASSIGN_OR_RETURN(auto txn, store_->BeginRead());
  OG_ASSIGN_OR_RETURN(Json db, LoadDatabase(txn.get(), catalog_id, GetName(request, "Name")));
  return Json{{"Database", std::move(db)}};
}

Result<Json> Catalog::GetDatabases(const Json& request) {
  std::string catalog_id = GetString(request, "CatalogId", options_.account_id);
  std::string prefix = store::PrefixOf({catalog_id});
  OG_ASSIGN_OR_RETURN(std::string after, DecodeToken(request, prefix));
  int64_t limit = PageSize(request, 100);
  OG_ASSIGN_OR_RETURN(auto txn, store_->BeginRead());
  store::ScanOptions scan{prefix, after, limit + 1, false};
  OG_ASSIGN_OR_RETURN(auto rows, txn->Scan(kDatabase, scan));
  Json list = Json::array();
  Json response = Json::object();
  bool only_name = false;
  if (request.contains("AttributesToGet")) {
    only_name = true;
    for (const Json& a : request["AttributesToGet"]) if (a != "NAME") only_name = false;
  }
  for (size_t i = 0; i < rows.size() && static_cast<int64_t>(i) < limit; ++i) {
    OG_ASSIGN_OR_RETURN(Json db, ParseDoc(rows[i].doc));
    if (only_name) db = Json{{"Name", db["Name"]}};
    list.push_back(std::move(db));
  }
  response["DatabaseList"] = std::move(list);
  if (static_cast<int64_t>(rows.size()) > limit) response["NextToken"] = EncodeToken(rows[limit - 1].key);
  return response;
}

Result<Json> Catalog::UpdateDatabase(const Json& request) {
  std::string catalog_id = GetString(request, "CatalogId", options_.account_id);
  std::string name = GetName(request, "Name");
  const Json& input = request.at("DatabaseInput");
  if (GetName(input, "Name") != name)
    return Status::InvalidInput("DatabaseInput.Name '" + GetName(input, "Name") +
                                "' differs from Name '" + name + "': databases cannot be renamed");
  OG_ASSIGN_OR_RETURN(auto txn, store_->BeginWrite());
  OG_ASSIGN_OR_RETURN(Json old, LoadDatabase(txn.get(), catalog_id, name));
  Json db = DatabaseFromInput(input, catalog_id, old.value("CreateTime", clock_->NowSeconds()));
  OG_RETURN_NOT_OK(txn->Put(kDatabase, store::MakeKey({catalog_id, name}), DumpJson(db)));
  OG_RETURN_NOT_OK(txn->Commit());
  return Json::object();
}

Result<Json> Catalog::DeleteDatabase(const Json& request) {
  std::string catalog_id = GetString(request, "CatalogId", options_.account_id);
  std::string name = GetName(request, "Name");
  OG_ASSIGN_OR_RETURN(auto txn, store_->BeginWrite());
  OG_RETURN_NOT_OK(LoadDatabase(txn.get(), catalog_id, name).status());
  std::string prefix = store::PrefixOf({catalog_id, name});
  store::ScanOptions scan{prefix, "", -1, /*keys_only=*/true};
  OG_ASSIGN_OR_RETURN(auto tables, txn->Scan(kTable, scan));
  for (const auto& row : tables) {
    std::string table = row.key.substr(prefix.size());
    OG_RETURN_NOT_OK(DeleteTableContents(txn.get(), options_.region, catalog_id, name, table));
  }
  OG_RETURN_NOT_OK(txn->DeletePrefix(kFunction, prefix).status());
  OG_RETURN_NOT_OK(resource::DeleteTagsWithPrefix(txn.get(), FunctionArn(options_.region, catalog_id, name, "")));
  OG_RETURN_NOT_OK(txn->Delete(kDatabase, store::MakeKey({catalog_id, name})).status());
  OG_RETURN_NOT_OK(resource::DeleteTags(txn.get(), DatabaseArn(options_.region, catalog_id, name)));
  OG_RETURN_NOT_OK(txn->Commit());
  return Json::object();
}

}  // namespace openglue::catalog
