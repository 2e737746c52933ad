// Tags on Glue ARNs: TagResource, UntagResource, GetTags.
//
// The catalog resolves ARNs of the resources it owns (database, table, userDefinedFunction) and
// those other modules registered (RegisterTaggableResource); the rest are EntityNotFound.
#include "catalog/catalog.h"
#include "catalog/catalog_util.h"
#include "common/strings.h"

namespace openglue::catalog {
namespace {

constexpr size_t kMaxTags = 50;

// Checks that `arn` names an existing catalog resource and returns its canonical form (names
// folded to lowercase, this server's region), under which its tags are kept. InvalidInput for a
// malformed ARN, EntityNotFound for a resource that does not exist.
Result<std::string> ResolveArn(store::Transaction* txn, const std::string& region,
                               const std::map<std::string, Catalog::ResourceCheck>& taggable,
                               const std::string& arn) {
  std::vector<std::string> parts = Split(arn, ':');
  if (parts.size() != 6 || parts[0] != "arn" || parts[2] != "glue" || parts[4].empty())
    return Status::InvalidInput("Invalid ARN '" + arn + "': expected arn:aws:glue:<region>:<account>:<resource>");
  const std::string& catalog_id = parts[4];
  std::vector<std::string> resource = Split(parts[5], '/');
  for (size_t i = 1; i < resource.size(); ++i) resource[i] = ToLower(resource[i]);
  const std::string& type = resource[0];
  if (type == "database" && resource.size() == 2) {
    OG_RETURN_NOT_OK(LoadDatabase(txn, catalog_id, resource[1]).status());
    return DatabaseArn(region, catalog_id, resource[1]);
  }
  if (type == "table" && resource.size() == 3) {
    OG_RETURN_NOT_OK(LoadTable(txn, catalog_id, resource[1], resource[2]).status());
    return TableArn(region, catalog_id, resource[1], resource[2]);
  }
  if (type == "userDefinedFunction" && resource.size() == 3) {
    OG_RETURN_NOT_OK(LoadDatabase(txn, catalog_id, resource[1]).status());
    OG_ASSIGN_OR_RETURN(auto doc, txn->Get(kFunction, store::MakeKey({catalog_id, resource[1], resource[2]})));
    if (!doc) return Status::EntityNotFound("Function " + resource[2] + " not found.");
    return FunctionArn(region, catalog_id, resource[1], resource[2]);
  }
  auto other = taggable.find(type);
  if (other != taggable.end()) {
    // Another module's resource: names are kept as given (job names are case-sensitive).
    std::vector<std::string> as_given = Split(parts[5], '/');
    OG_RETURN_NOT_OK(other->second(txn, as_given));
    return "arn:aws:glue:" + region + ":" + catalog_id + ":" + parts[5];
  }
  return Status::EntityNotFound("Resource " + arn + " not found.");
}

Result<Json> LoadTags(store::Transaction* txn, const std::string& arn) {
  OG_ASSIGN_OR_RETURN(auto doc, txn->Get(kTags, arn));
  if (!doc) return Json::object();
  return ParseDoc(*doc);
}

}  // namespace

Status AddTags(store::Transaction* txn, const std::string& arn, const Json& tags) {
  OG_ASSIGN_OR_RETURN(Json current, LoadTags(txn, arn));
  for (auto& [key, value] : tags.items()) current[key] = value;
  if (current.size() > kMaxTags)
    return Status::InvalidInput("A resource can have at most " + std::to_string(kMaxTags) + " tags");
  return txn->Put(kTags, arn, DumpJson(current));
}

void Catalog::RegisterTaggableResource(const std::string& type, ResourceCheck exists) {
  taggable_[type] = std::move(exists);
}

Result<Json> Catalog::TagResource(const Json& request) {
  OG_ASSIGN_OR_RETURN(auto txn, store_->BeginWrite());
  OG_ASSIGN_OR_RETURN(std::string arn, ResolveArn(txn.get(), options_.region, taggable_, GetString(request, "ResourceArn")));
  OG_RETURN_NOT_OK(AddTags(txn.get(), arn, request.at("TagsToAdd")));
  OG_RETURN_NOT_OK(txn->Commit());
  return Json::object();
}

Result<Json> Catalog::UntagResource(const Json& request) {
  OG_ASSIGN_OR_RETURN(auto txn, store_->BeginWrite());
  OG_ASSIGN_OR_RETURN(std::string arn, ResolveArn(txn.get(), options_.region, taggable_, GetString(request, "ResourceArn")));
  OG_ASSIGN_OR_RETURN(Json current, LoadTags(txn.get(), arn));
  for (const Json& key : request.at("TagsToRemove")) current.erase(key.get<std::string>());
  OG_RETURN_NOT_OK(txn->Put(kTags, arn, DumpJson(current)));
  OG_RETURN_NOT_OK(txn->Commit());
  return Json::object();
}

Result<Json> Catalog::GetTags(const Json& request) {
  OG_ASSIGN_OR_RETURN(auto txn, store_->BeginRead());
  OG_ASSIGN_OR_RETURN(std::string arn, ResolveArn(txn.get(), options_.region, taggable_, GetString(request, "ResourceArn")));
  OG_ASSIGN_OR_RETURN(Json tags, LoadTags(txn.get(), arn));
  return Json{{"Tags", std::move(tags)}};
}

}  // namespace openglue::catalog
