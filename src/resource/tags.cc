#include "resource/tags.h"

#include "common/strings.h"
#include "resource/request.h"

namespace openglue::resource {

Result<bool> HasTags(store::Transaction* txn, const std::string& arn, const Json& wanted) {
  if (!wanted.is_object() || wanted.empty()) return true;
  OG_ASSIGN_OR_RETURN(auto doc, txn->Get(kTags, arn));
  Json tags = doc ? ParseJson(*doc) : Json::object();
  if (!tags.is_object()) return false;
  for (auto& [k, v] : wanted.items())
    if (!tags.contains(k) || tags[k] != v) return false;
  return true;
}

Result<Json> LoadTags(store::Transaction* txn, const std::string& arn) {
  OG_ASSIGN_OR_RETURN(auto doc, txn->Get(kTags, arn));
  if (!doc) return Json::object();
  Json tags = ParseJson(*doc);
  if (tags.is_discarded() || !tags.is_object())
    return Status::Internal("corrupt tag document in the store");
  return tags;
}

Status AddTags(store::Transaction* txn, const std::string& arn, const Json& tags) {
  if (!tags.is_object()) return Status::InvalidInput("Tags must be a map of strings");
  OG_ASSIGN_OR_RETURN(Json current, LoadTags(txn, arn));
  for (auto& [key, value] : tags.items()) current[key] = value;
  if (current.size() > kMaxTags)
    return Status::InvalidInput("A resource can have at most " + std::to_string(kMaxTags) + " tags");
  return txn->Put(kTags, arn, DumpJson(current));
}

Status RemoveTags(store::Transaction* txn, const std::string& arn, const Json& keys) {
  OG_ASSIGN_OR_RETURN(Json current, LoadTags(txn, arn));
  if (keys.is_array())
    for (const Json& key : keys)
      if (key.is_string()) current.erase(key.get<std::string>());
  if (current.empty()) return txn->Delete(kTags, arn).status();
  return txn->Put(kTags, arn, DumpJson(current));
}

Status DeleteTags(store::Transaction* txn, const std::string& arn) {
  return txn->Delete(kTags, arn).status();
}

Status DeleteTagsWithPrefix(store::Transaction* txn, const std::string& arn_prefix) {
  return txn->DeletePrefix(kTags, arn_prefix).status();
}

Status MoveTags(store::Transaction* txn, const std::string& from, const std::string& to) {
  OG_ASSIGN_OR_RETURN(auto doc, txn->Get(kTags, from));
  if (!doc) return Status::OK();
  OG_RETURN_NOT_OK(txn->Put(kTags, to, *doc));
  return txn->Delete(kTags, from).status();
}

void TagService::Register(const std::string& type, ResourceCheck exists, NameCase names) {
  types_[type] = ResourceType{std::move(exists), names};
}

Result<std::string> TagService::Resolve(store::Transaction* txn, const std::string& text) const {
  OG_ASSIGN_OR_RETURN(Arn arn, Arn::Parse(text));
  auto type = types_.find(arn.type());
  if (type == types_.end()) return Status::EntityNotFound("Resource " + text + " not found.");
  if (type->second.names == NameCase::kFolded)
    for (size_t i = 1; i < arn.resource.size(); ++i) arn.resource[i] = ToLower(arn.resource[i]);
  OG_RETURN_NOT_OK(type->second.exists(txn, arn));
  return GlueArn(region_, arn.account_id, arn.resource);
}

const std::vector<std::pair<std::string, TagService::Operation>>& TagService::Operations() {
  static const std::vector<std::pair<std::string, Operation>> kOperations = {
      {"TagResource", &TagService::TagResource},
      {"UntagResource", &TagService::UntagResource},
      {"GetTags", &TagService::GetTags},
  };
  return kOperations;
}

Result<Json> TagService::TagResource(const Json& request) {
  OG_ASSIGN_OR_RETURN(auto txn, store_->BeginWrite());
  OG_ASSIGN_OR_RETURN(std::string arn, Resolve(txn.get(), GetString(request, "ResourceArn")));
  OG_RETURN_NOT_OK(AddTags(txn.get(), arn, GetObject(request, "TagsToAdd")));
  OG_RETURN_NOT_OK(txn->Commit());
  return Json::object();
}

Result<Json> TagService::UntagResource(const Json& request) {
  OG_ASSIGN_OR_RETURN(auto txn, store_->BeginWrite());
  OG_ASSIGN_OR_RETURN(std::string arn, Resolve(txn.get(), GetString(request, "ResourceArn")));
  auto keys = request.find("TagsToRemove");
  OG_RETURN_NOT_OK(RemoveTags(txn.get(), arn, keys == request.end() ? Json::array() : *keys));
  OG_RETURN_NOT_OK(txn->Commit());
  return Json::object();
}

Result<Json> TagService::GetTags(const Json& request) {
  OG_ASSIGN_OR_RETURN(auto txn, store_->BeginRead());
  OG_ASSIGN_OR_RETURN(std::string arn, Resolve(txn.get(), GetString(request, "ResourceArn")));
  OG_ASSIGN_OR_RETURN(Json tags, LoadTags(txn.get(), arn));
  return Json{{"Tags", std::move(tags)}};
}

}  // namespace openglue::resource
