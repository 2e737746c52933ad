// Column statistics for tables and partitions: Get/Update/Delete ColumnStatisticsFor{Table,Partition}.
//
// Statistics are kept per column under the table's key range (tables) or under the partition's
// value key followed by kColumnSep (partitions), so deleting a table or partition drops them.
#include <algorithm>

#include "catalog/catalog.h"
#include "catalog/catalog_util.h"
#include "common/strings.h"

namespace openglue::catalog {
namespace {

// Where one owner's (table or partition) statistics live, and which columns it has.
struct StatsOwner {
  std::string_view kind;
  std::string prefix;  // key = prefix + column name
  std::vector<std::string> columns;
  std::string description;
};

std::vector<std::string> ColumnNames(const Json& doc, bool with_partition_keys) {
  std::vector<std::string> names;
  if (doc.contains("StorageDescriptor") && doc["StorageDescriptor"].contains("Columns"))
    for (const Json& c : doc["StorageDescriptor"]["Columns"]) names.push_back(ToLower(GetString(c, "Name")));
  if (with_partition_keys && doc.contains("PartitionKeys"))
    for (const Json& c : doc["PartitionKeys"]) names.push_back(ToLower(GetString(c, "Name")));
  return names;
}

Result<StatsOwner> ResolveOwner(store::Transaction* txn, const Json& request,
                                const std::string& default_catalog, bool partition) {
  std::string catalog_id = GetString(request, "CatalogId", default_catalog);
  std::string database = GetName(request, "DatabaseName");
  std::string table = GetName(request, "TableName");
  OG_ASSIGN_OR_RETURN(Json table_doc, LoadTable(txn, catalog_id, database, table));
  StatsOwner owner;
  std::string table_prefix = store::PrefixOf({catalog_id, database, table});
  if (!partition) {
    owner.kind = kTableColumnStats;
    owner.prefix = table_prefix;
    owner.columns = ColumnNames(table_doc, true);
    owner.description = "table " + table;
    return owner;
  }
  const Json& values = request.at("PartitionValues");
  size_t key_count = table_doc.value("PartitionKeys", Json::array()).size();
  if (values.size() != key_count)
    return Status::InvalidInput("The number of partition values (" + std::to_string(values.size()) +
                                ") does not match the number of partition keys (" +
                                std::to_string(key_count) + ") of table " + table);
  OG_ASSIGN_OR_RETURN(std::string value_key, PartitionValueKey(values));
  OG_ASSIGN_OR_RETURN(auto doc, txn->Get(kPartition, table_prefix + value_key));
  if (!doc) return Status::EntityNotFound("Partition not found.");
  OG_ASSIGN_OR_RETURN(Json partition_doc, ParseDoc(*doc));
  owner.kind = kPartitionColumnStats;
  owner.prefix = table_prefix + value_key + kColumnSep;
  owner.columns = ColumnNames(partition_doc, false);
  if (owner.columns.empty()) owner.columns = ColumnNames(table_doc, false);
  owner.description = "partition of table " + table;
  return owner;
}

Status CheckColumn(const StatsOwner& owner, const std::string& column) {
  if (std::find(owner.columns.begin(), owner.columns.end(), column) == owner.columns.end())
    return Status::EntityNotFound("Column " + column + " not found in " + owner.description);
  return Status::OK();
}

}  // namespace

namespace {

Result<Json> GetStats(store::MetadataStore* store, const Json& request, const std::string& catalog,
                      bool partition) {
  OG_ASSIGN_OR_RETURN(auto txn, store->BeginRead());
  OG_ASSIGN_OR_RETURN(StatsOwner owner, ResolveOwner(txn.get(), request, catalog, partition));
  Json list = Json::array();
  Json errors = Json::array();
  for (const Json& c : request.at("ColumnNames")) {
    std::string column = ToLower(c.get<std::string>());
    Status st = CheckColumn(owner, column);
    if (st.ok()) {
      OG_ASSIGN_OR_RETURN(auto doc, txn->Get(owner.kind, owner.prefix + column));
      if (doc) {
        OG_ASSIGN_OR_RETURN(Json stats, ParseDoc(*doc));
        list.push_back(std::move(stats));
        continue;
      }
      st = Status::EntityNotFound("No statistics for column " + column + " of " + owner.description);
    }
    OG_RETURN_NOT_OK(RecordItemError(st, {{"ColumnName", column}}, &errors, "Error"));
  }
  return Json{{"ColumnStatisticsList", std::move(list)}, {"Errors", std::move(errors)}};
}

Result<Json> UpdateStats(store::MetadataStore* store, const Json& request, const std::string& catalog,
                         bool partition) {
  OG_ASSIGN_OR_RETURN(auto txn, store->BeginWrite());
  OG_ASSIGN_OR_RETURN(StatsOwner owner, ResolveOwner(txn.get(), request, catalog, partition));
  Json errors = Json::array();
  for (const Json& stats : request.at("ColumnStatisticsList")) {
    std::string column = ToLower(GetString(stats, "ColumnName"));
    Status st = CheckColumn(owner, column);
    if (st.ok()) {
      Json stored = stats;
      stored["ColumnName"] = column;
      OG_RETURN_NOT_OK(txn->Put(owner.kind, owner.prefix + column, DumpJson(stored)));
      continue;
    }
    OG_RETURN_NOT_OK(RecordItemError(st, {{"ColumnStatistics", stats}}, &errors, "Error"));
  }
  OG_RETURN_NOT_OK(txn->Commit());
  return Json{{"Errors", std::move(errors)}};
}

Result<Json> DeleteStats(store::MetadataStore* store, const Json& request, const std::string& catalog,
                         bool partition) {
  OG_ASSIGN_OR_RETURN(auto txn, store->BeginWrite());
  OG_ASSIGN_OR_RETURN(StatsOwner owner, ResolveOwner(txn.get(), request, catalog, partition));
  std::string column = ToLower(GetString(request, "ColumnName"));
  OG_RETURN_NOT_OK(CheckColumn(owner, column));
  OG_ASSIGN_OR_RETURN(bool existed, txn->Delete(owner.kind, owner.prefix + column));
  if (!existed)
    return Status::EntityNotFound("No statistics for column " + column + " of " + owner.description);
  OG_RETURN_NOT_OK(txn->Commit());
  return Json::object();
}

}  // namespace

Result<Json> Catalog::GetColumnStatisticsForTable(const Json& request) {
  return GetStats(store_, request, options_.account_id, false);
}
Result<Json> Catalog::UpdateColumnStatisticsForTable(const Json& request) {
  return UpdateStats(store_, request, options_.account_id, false);
}
Result<Json> Catalog::DeleteColumnStatisticsForTable(const Json& request) {
  return DeleteStats(store_, request, options_.account_id, false);
}
Result<Json> Catalog::GetColumnStatisticsForPartition(const Json& request) {
  return GetStats(store_, request, options_.account_id, true);
}
Result<Json> Catalog::UpdateColumnStatisticsForPartition(const Json& request) {
  return UpdateStats(store_, request, options_.account_id, true);
}
Result<Json> Catalog::DeleteColumnStatisticsForPartition(const Json& request) {
  return DeleteStats(store_, request, options_.account_id, true);
}

}  // namespace openglue::catalog
