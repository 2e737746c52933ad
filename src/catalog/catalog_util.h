// Helpers shared by the catalog's operation files: store kinds and keys, name folding and the
// lookups every operation starts with. Service-neutral plumbing (request getters, paging, ARNs,
// tags, the batch rule) lives in the resource module; the catalog uses it unqualified.
#pragma once

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/json.h"
#include "common/status.h"
#include "resource/arn.h"
#include "resource/batch.h"
#include "resource/paging.h"
#include "resource/request.h"
#include "resource/tags.h"
#include "store/metadata_store.h"

namespace openglue::catalog {

// Store kinds (collections) owned by the catalog.
inline constexpr std::string_view kDatabase = "database";
inline constexpr std::string_view kTable = "table";
inline constexpr std::string_view kTableVersion = "table_version";
inline constexpr std::string_view kPartition = "partition";
inline constexpr std::string_view kPartitionIndex = "partition_index";
inline constexpr std::string_view kPartitionIndexEntry = "partition_index_entry";
inline constexpr std::string_view kFunction = "function";
inline constexpr std::string_view kTableColumnStats = "column_stats_table";
inline constexpr std::string_view kPartitionColumnStats = "column_stats_partition";
inline constexpr std::string_view kConnection = "connection";
using resource::kTags;
using resource::AddTags;
using resource::DecodeToken;
using resource::EncodeToken;
using resource::ErrorDetail;
using resource::GetString;
using resource::Page;
using resource::PageSize;
using resource::RecordItemError;
using resource::ScanPage;

// Separates a partition's value key from a column name in partition column-statistics keys.
inline constexpr char kColumnSep = '\x1e';

// A required string member, folded to lowercase (database, table, function names).
std::string GetName(const Json& request, const char* member);

// The `Values` of a partition as the store key part: values joined by store::kKeySep.
// InvalidInput if a value contains a control separator character.
Result<std::string> PartitionValueKey(const Json& values);
std::vector<std::string_view> SplitValueKey(std::string_view value_key);

Result<Json> ParseDoc(const std::string& doc);

// Loads the database; EntityNotFound "Database <name> not found." when absent.
Result<Json> LoadDatabase(store::Transaction* txn, const std::string& catalog_id,
                          const std::string& database);
// The table's stored document, unparsed; EntityNotFound naming what is missing (the database
// or the table).
Result<std::string> LoadTableDocument(store::Transaction* txn, const std::string& catalog_id,
                                      const std::string& database, const std::string& table);
// Loads the table; EntityNotFound naming what is missing (the database or the table).
Result<Json> LoadTable(store::Transaction* txn, const std::string& catalog_id,
                       const std::string& database, const std::string& table);

// Hive-style name pattern as GetTables' Expression and GetUserDefinedFunctions' Pattern use it:
// '*' matches any run, '|' separates alternatives, the rest is a regular expression, matched
// against the whole name case-insensitively. InvalidInput for a bad pattern.
class NamePattern {
 public:
  static Result<NamePattern> Make(const std::string& pattern);
  bool Matches(const std::string& name) const;

 private:
  struct Impl;
  std::shared_ptr<const Impl> impl_;
};

}  // namespace openglue::catalog

namespace openglue::catalog {

// ARNs of catalog resources, as Glue forms them.
std::string DatabaseArn(const std::string& region, const std::string& catalog_id,
                        const std::string& database);
std::string TableArn(const std::string& region, const std::string& catalog_id,
                     const std::string& database, const std::string& table);
std::string FunctionArn(const std::string& region, const std::string& catalog_id,
                        const std::string& database, const std::string& function);
std::string ConnectionArn(const std::string& region, const std::string& catalog_id,
                          const std::string& connection);

// Removes a table and everything hanging off it (versions, partitions, indexes, statistics,
// tags) inside `txn`.
Status DeleteTableContents(store::Transaction* txn, const std::string& region,
                           const std::string& catalog_id, const std::string& database,
                           const std::string& table);

}  // namespace openglue::catalog

namespace openglue::catalog {

// Zero-padded decimal so that versions sort numerically as keys.
std::string VersionKey(int64_t version);

}  // namespace openglue::catalog

namespace openglue::catalog {

// Creates the partition index `index` ({"IndexName", "Keys"}) on the table `table_doc` and
// indexes the table's existing partitions. InvalidInput for keys that are not partition keys
// or of a type indexes do not support, AlreadyExists, ResourceNumberLimitExceeded past 3.
Status CreatePartitionIndexInTxn(store::Transaction* txn, const std::string& catalog_id,
                                 const Json& table_doc, const Json& index);

}  // namespace openglue::catalog
