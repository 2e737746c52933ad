// User-defined functions: Create/Get/Gets/Update/Delete UserDefinedFunction.
#include "catalog/catalog.h"
#include "catalog/catalog_util.h"
#include "common/strings.h"

namespace openglue::catalog {
namespace {

Json FunctionFromInput(const Json& input, const std::string& catalog_id, const std::string& database,
                       double create_time) {
  Json function = Json::object();
  function["FunctionName"] = GetName(input, "FunctionName");
  function["DatabaseName"] = database;
  for (const char* member : {"ClassName", "OwnerName", "FunctionType", "OwnerType", "ResourceUris"})
    if (input.contains(member) && !input[member].is_null()) function[member] = input[member];
  if (!function.contains("ResourceUris")) function["ResourceUris"] = Json::array();
  function["CreateTime"] = create_time;
  function["CatalogId"] = catalog_id;
  return function;
}

}  // namespace

Result<Json> Catalog::CreateUserDefinedFunction(const Json& request) {
  std::string catalog_id = GetString(request, "CatalogId", options_.account_id);
  std::string database = GetName(request, "DatabaseName");
  Json function = FunctionFromInput(request.at("FunctionInput"), catalog_id, database, clock_->NowSeconds());
  OG_ASSIGN_OR_RETURN(auto txn, store_->BeginWrite());
  OG_RETURN_NOT_OK(LoadDatabase(txn.get(), catalog_id, database).status());
  Status st = txn->Insert(kFunction, store::MakeKey({catalog_id, database, function["FunctionName"].get<std::string>()}),
                          DumpJson(function));
  if (st.code() == StatusCode::kAlreadyExists) return Status::AlreadyExists("Function already exists.");
  OG_RETURN_NOT_OK(st);
  OG_RETURN_NOT_OK(txn->Commit());
  return Json::object();
}

Result<Json> Catalog::GetUserDefinedFunction(const Json& request) {
  std::string catalog_id = GetString(request, "CatalogId", options_.account_id);
  std::string database = GetName(request, "DatabaseName");
  std::string name = GetName(request, "FunctionName");
  OG_ASSIGN_OR_RETURN(auto txn, store_->BeginRead());
  OG_RETURN_NOT_OK(LoadDatabase(txn.get(), catalog_id, database).status());
  OG_ASSIGN_OR_RETURN(auto doc, txn->Get(kFunction, store::MakeKey({catalog_id, database, name})));
  if (!doc) return Status::EntityNotFound("Function " + name + " not found.");
  OG_ASSIGN_OR_RETURN(Json function, ParseDoc(*doc));
  return Json{{"UserDefinedFunction", std::move(function)}};
}

Result<Json> Catalog::GetUserDefinedFunctions(const Json& request) {
  std::string catalog_id = GetString(request, "CatalogId", options_.account_id);
  std::string database = GetName(request, "DatabaseName");
  OG_ASSIGN_OR_RETURN(NamePattern pattern, NamePattern::Make(GetString(request, "Pattern")));
  OG_ASSIGN_OR_RETURN(auto txn, store_->BeginRead());
  std::string prefix = store::PrefixOf({catalog_id});
  if (!database.empty()) {
    OG_RETURN_NOT_OK(LoadDatabase(txn.get(), catalog_id, database).status());
    prefix = store::PrefixOf({catalog_id, database});
  }
  OG_ASSIGN_OR_RETURN(Page page, ScanPage(txn.get(), kFunction, prefix, request, PageSize(request, 100),
                                       [&](const store::Row& row) -> Result<bool> {
                                         size_t sep = row.key.rfind(store::kKeySep);
                                         return pattern.Matches(row.key.substr(sep + 1));
                                       }));
  Json list = Json::array();
  for (const auto& row : page.rows) {
    OG_ASSIGN_OR_RETURN(Json function, ParseDoc(row.doc));
    list.push_back(std::move(function));
  }
  Json response{{"UserDefinedFunctions", std::move(list)}};
  if (!page.next_token.empty()) response["NextToken"] = page.next_token;
  return response;
}

Result<Json> Catalog::UpdateUserDefinedFunction(const Json& request) {
  std::string catalog_id = GetString(request, "CatalogId", options_.account_id);
  std::string database = GetName(request, "DatabaseName");
  std::string name = GetName(request, "FunctionName");
  OG_ASSIGN_OR_RETURN(auto txn, store_->BeginWrite());
  OG_RETURN_NOT_OK(LoadDatabase(txn.get(), catalog_id, database).status());
  std::string key = store::MakeKey({catalog_id, database, name});
  OG_ASSIGN_OR_RETURN(auto doc, txn->Get(kFunction, key));
  if (!doc) return Status::EntityNotFound("Function " + name + " not found.");
  OG_ASSIGN_OR_RETURN(Json old, ParseDoc(*doc));
  Json function = FunctionFromInput(request.at("FunctionInput"), catalog_id, database,
                                    old.value("CreateTime", clock_->NowSeconds()));
  std::string new_name = function["FunctionName"];
  if (new_name != name) {
    // A new FunctionName renames the function.
    OG_RETURN_NOT_OK(txn->Delete(kFunction, key).status());
    Status st = txn->Insert(kFunction, store::MakeKey({catalog_id, database, new_name}), DumpJson(function));
    if (st.code() == StatusCode::kAlreadyExists)
      return Status::AlreadyExists("Function " + new_name + " already exists.");
    OG_RETURN_NOT_OK(st);
    // The tags go with the function to its new ARN.
    OG_RETURN_NOT_OK(resource::MoveTags(txn.get(), FunctionArn(options_.region, catalog_id, database, name),
                                        FunctionArn(options_.region, catalog_id, database, new_name)));
  } else {
    OG_RETURN_NOT_OK(txn->Put(kFunction, key, DumpJson(function)));
  }
  OG_RETURN_NOT_OK(txn->Commit());
  return Json::object();
}

Result<Json> Catalog::DeleteUserDefinedFunction(const Json& request) {
  std::string catalog_id = GetString(request, "CatalogId", options_.account_id);
  std::string database = GetName(request, "DatabaseName");
  std::string name = GetName(request, "FunctionName");
  OG_ASSIGN_OR_RETURN(auto txn, store_->BeginWrite());
  OG_RETURN_NOT_OK(LoadDatabase(txn.get(), catalog_id, database).status());
  OG_ASSIGN_OR_RETURN(bool existed, txn->Delete(kFunction, store::MakeKey({catalog_id, database, name})));
  if (!existed) return Status::EntityNotFound("Function " + name + " not found.");
  OG_RETURN_NOT_OK(resource::DeleteTags(txn.get(), FunctionArn(options_.region, catalog_id, database, name)));
  OG_RETURN_NOT_OK(txn->Commit());
  return Json::object();
}

}  // namespace openglue::catalog
