// Tags on Glue ARNs: one tag store for every taggable resource, and the TagResource,
// UntagResource and GetTags operations over it.
//
// Tags are kept in the store kind kTags under the resource's canonical ARN (this server's
// region, the ARN's account, names folded to lowercase for resource types registered with
// NameCase::kFolded). Services register a resolver per resource type ("database", "table",
// "job", ...) that checks the resource exists; an ARN of an unregistered type is
// EntityNotFound. Services that create, rename or delete a resource keep its tags in step with
// AddTags / MoveTags / DeleteTags inside their own transaction.
//
// Thread-safe after setup: Register before serving, then operations may run concurrently.
#pragma once

#include <functional>
#include <map>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "common/json.h"
#include "common/status.h"
#include "resource/arn.h"
#include "store/metadata_store.h"

namespace openglue::resource {

inline constexpr std::string_view kTags = "tags";
inline constexpr size_t kMaxTags = 50;

// The tags of `arn` (an object; empty when it has none).
Result<Json> LoadTags(store::Transaction* txn, const std::string& arn);
// Whether `arn` carries every key of `wanted` (a JSON object of strings) with the same value,
// as the Tags filter of ListJobs / ListTriggers asks. An empty `wanted` matches everything; a
// damaged tag document matches nothing.
Result<bool> HasTags(store::Transaction* txn, const std::string& arn, const Json& wanted);
// Adds or replaces `tags` (a JSON object of strings). InvalidInput for a non-object or past
// kMaxTags tags in all.
Status AddTags(store::Transaction* txn, const std::string& arn, const Json& tags);
// Removes the keys listed in `keys` (a JSON array of strings; others are ignored).
Status RemoveTags(store::Transaction* txn, const std::string& arn, const Json& keys);
// Drops every tag of `arn`, or of every ARN starting with `arn_prefix`.
Status DeleteTags(store::Transaction* txn, const std::string& arn);
Status DeleteTagsWithPrefix(store::Transaction* txn, const std::string& arn_prefix);
// Moves the tags of `from` to `to` (a renamed resource).
Status MoveTags(store::Transaction* txn, const std::string& from, const std::string& to);

enum class NameCase { kAsGiven, kFolded };

// Checks that the resource an ARN names exists (`arn.resource` is {"job", "<name>"}, names
// already folded for NameCase::kFolded; `arn.account_id` is the catalog id): OK or
// EntityNotFound (also for a resource part of the wrong shape).
using ResourceCheck = std::function<Status(store::Transaction* txn, const Arn& arn)>;

class TagService {
 public:
  // `store` is borrowed and must outlive the service. `region` is this server's region.
  TagService(store::MetadataStore* store, std::string region)
      : store_(store), region_(std::move(region)) {}

  // Makes ARNs of `type` taggable. With NameCase::kFolded the names after the type are folded
  // to lowercase before `exists` sees them (catalog names); kAsGiven keeps them (job names).
  // Call before serving.
  void Register(const std::string& type, ResourceCheck exists, NameCase names = NameCase::kAsGiven);

  // The canonical ARN under which the tags of `arn` are kept. InvalidInput for a malformed ARN,
  // EntityNotFound for an unregistered type or a resource that does not exist.
  Result<std::string> Resolve(store::Transaction* txn, const std::string& arn) const;

  using Operation = Result<Json> (TagService::*)(const Json& request);
  // The Glue operations this service implements, with their handlers.
  static const std::vector<std::pair<std::string, Operation>>& Operations();

  Result<Json> TagResource(const Json& request);
  Result<Json> UntagResource(const Json& request);
  Result<Json> GetTags(const Json& request);

 private:
  struct ResourceType {
    ResourceCheck exists;
    NameCase names;
  };
  store::MetadataStore* store_;
  std::string region_;
  std::map<std::string, ResourceType> types_;  // written only before serving
};

}  // namespace openglue::resource
