#include "catalog/catalog_util.h"

#include <re2/re2.h>

#include "catalog/catalog.h"
#include "common/strings.h"

namespace openglue::catalog {

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

Result<std::string> LoadTableDocument(store::Transaction* txn, const std::string& catalog_id,
                                      const std::string& database, const std::string& table) {
  OG_ASSIGN_OR_RETURN(auto doc, txn->Get(kTable, store::MakeKey({catalog_id, database, table})));
  if (!doc) {
    OG_ASSIGN_OR_RETURN(auto db, txn->Get(kDatabase, store::MakeKey({catalog_id, database})));
    if (!db) return Status::EntityNotFound("Database " + database + " not found.");
    return Status::EntityNotFound("Table " + table + " not found.");
  }
  return std::move(*doc);
}

Result<Json> LoadTable(store::Transaction* txn, const std::string& catalog_id,
                       const std::string& database, const std::string& table) {
  OG_ASSIGN_OR_RETURN(std::string doc, LoadTableDocument(txn, catalog_id, database, table));
  return ParseDoc(doc);
}

std::optional<std::string> SerializedResponseCache::Find(const std::string& key,
                                                         const std::string& doc) {
  MutexLock lock(&mutex_);
  auto it = entries_.find(key);
  if (it == entries_.end() || it->second.doc != doc) return std::nullopt;
  return it->second.body;
}

void SerializedResponseCache::Put(const std::string& key, std::string doc, std::string body) {
  size_t size = key.size() + doc.size() + body.size();
  if (size > kMaxEntryBytes) return;
  MutexLock lock(&mutex_);
  auto it = entries_.find(key);
  if (it != entries_.end()) {
    bytes_ -= it->first.size() + it->second.doc.size() + it->second.body.size();
    entries_.erase(it);
  }
  if (bytes_ + size > kMaxBytes) {
    entries_.clear();
    bytes_ = 0;
  }
  entries_.emplace(key, Entry{std::move(doc), std::move(body)});
  bytes_ += size;
}

// Glue's name pattern dialect on RE2, a linear-time engine: a client's pattern can cost at
// most time proportional to pattern size times name length, never exponential backtracking.
struct NamePattern::Impl {
  std::unique_ptr<RE2> regex;
  bool match_all = false;
};

namespace {
// Bounds what one compiled pattern may hold (RE2 falls back to its NFA past the DFA budget; a
// program larger than this fails to compile and is refused as InvalidInput).
constexpr int64_t kMaxPatternMemory = 4 << 20;
constexpr size_t kMaxPatternMessage = 200;
}  // namespace

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
    RE2::Options options;
    options.set_case_sensitive(false);
    options.set_log_errors(false);
    options.set_max_mem(kMaxPatternMemory);
    // Not wrapped in a group: FullMatch anchors the whole expression, so top-level
    // alternatives ("a*|b*") each match the whole name, and a stray ')' stays an error.
    impl->regex = std::make_unique<RE2>(translated, options);
    if (!impl->regex->ok())
      return Status::InvalidInput("Invalid name pattern '" +
                                  TruncateUtf8(SanitizeUtf8(pattern), kMaxPatternMessage) +
                                  "': " + impl->regex->error());
  }
  NamePattern result;
  result.impl_ = std::move(impl);
  return result;
}

bool NamePattern::Matches(const std::string& name) const {
  if (impl_->match_all) return true;
  return RE2::FullMatch(name, *impl_->regex);
}

}  // namespace openglue::catalog

namespace openglue::catalog {

std::string VersionKey(int64_t version) {
  std::string digits = std::to_string(version);
  return std::string(digits.size() < 12 ? 12 - digits.size() : 0, '0') + digits;
}

std::string DatabaseArn(const std::string& region, const std::string& catalog_id,
                        const std::string& database) {
  return resource::GlueArn(region, catalog_id, {"database", database});
}

std::string TableArn(const std::string& region, const std::string& catalog_id,
                     const std::string& database, const std::string& table) {
  return resource::GlueArn(region, catalog_id, {"table", database, table});
}

std::string FunctionArn(const std::string& region, const std::string& catalog_id,
                        const std::string& database, const std::string& function) {
  return resource::GlueArn(region, catalog_id, {"userDefinedFunction", database, function});
}

std::string ConnectionArn(const std::string& region, const std::string& catalog_id,
                          const std::string& connection) {
  return resource::GlueArn(region, catalog_id, {"connection", connection});
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
  return resource::DeleteTags(txn, TableArn(region, catalog_id, database, table));
}

void RegisterTaggableResources(resource::TagService* tags) {
  using resource::Arn;
  using resource::NameCase;
  auto not_found = [](const Arn& arn) {
    return Status::EntityNotFound("Resource " + arn.ToString() + " not found.");
  };
  tags->Register(
      "database",
      [not_found](store::Transaction* txn, const Arn& arn) -> Status {
        if (arn.resource.size() != 2) return not_found(arn);
        return LoadDatabase(txn, arn.account_id, arn.resource[1]).status();
      },
      NameCase::kFolded);
  tags->Register(
      "table",
      [not_found](store::Transaction* txn, const Arn& arn) -> Status {
        if (arn.resource.size() != 3) return not_found(arn);
        return LoadTable(txn, arn.account_id, arn.resource[1], arn.resource[2]).status();
      },
      NameCase::kFolded);
  tags->Register(
      "userDefinedFunction",
      [not_found](store::Transaction* txn, const Arn& arn) -> Status {
        if (arn.resource.size() != 3) return not_found(arn);
        const std::string& database = arn.resource[1];
        const std::string& function = arn.resource[2];
        OG_RETURN_NOT_OK(LoadDatabase(txn, arn.account_id, database).status());
        OG_ASSIGN_OR_RETURN(auto doc, txn->Get(kFunction, store::MakeKey({arn.account_id, database, function})));
        if (!doc) return Status::EntityNotFound("Function " + function + " not found.");
        return Status::OK();
      },
      NameCase::kFolded);
  // Connection names are kept as given, and may contain '/': the name is the rest of the ARN.
  tags->Register(
      "connection",
      [not_found](store::Transaction* txn, const Arn& arn) -> Status {
        if (arn.resource.size() < 2) return not_found(arn);
        std::vector<std::string> parts(arn.resource.begin() + 1, arn.resource.end());
        std::string name = Join(parts, "/");
        OG_ASSIGN_OR_RETURN(auto doc, txn->Get(kConnection, store::MakeKey({arn.account_id, name})));
        if (!doc) return Status::EntityNotFound("Connection " + name + " not found.");
        return Status::OK();
      },
      NameCase::kAsGiven);
}

}  // namespace openglue::catalog
