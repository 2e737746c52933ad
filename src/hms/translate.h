// Translation between the Hive Metastore's Thrift structs and the Glue catalog's documents.
//
// Glue's Data Catalog model is Hive's, so most members map one to one:
//   Database  name/description/locationUri/parameters  <-> Name/Description/LocationUri/Parameters
//   Table     tableName/dbName/owner/createTime/lastAccessTime/retention/sd/partitionKeys/
//             parameters/viewOriginalText/viewExpandedText/tableType  <-> the Glue Table members
//             of the same meaning (times in whole seconds); Hive keeps a table's comment in
//             parameters["comment"], Glue in Description: both are filled.
//   Partition values/dbName/tableName/createTime/lastAccessTime/sd/parameters <-> Values/
//             DatabaseName/TableName/CreationTime/LastAccessTime/StorageDescriptor/Parameters
//   StorageDescriptor, SerDeInfo, FieldSchema, Order, SkewedInfo <-> their Glue namesakes.
// A Glue table without TableType reads as EXTERNAL_TABLE (Hive clients refuse a table without
// a type); a Glue partition without a StorageDescriptor gets its table's, located at
// <table location>/<partition name>; a database without LocationUri gets
// `default_location_root`/<name>.db.
//
// Also here: Hive partition names (k1=v1/k2=v2, escaped as Hive escapes path names) and the
// translation of get_partitions_by_filter's filter string into a Glue GetPartitions Expression.
//
// Pure functions: no I/O, thread-safe, never throw on any input.
#pragma once

#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "common/json.h"
#include "common/status.h"
#include "hive_metastore_types.h"

namespace openglue::hms {

// Glue documents -> Hive structs.
wire::Database DatabaseToHive(const Json& database, const std::string& default_location_root);
wire::Table TableToHive(const Json& table);
// `table` is the partition's Glue table (for a partition without a StorageDescriptor).
wire::Partition PartitionToHive(const Json& partition, const Json& table);
wire::Function FunctionToHive(const Json& function);
wire::StorageDescriptor StorageDescriptorToHive(const Json& sd);
std::vector<wire::FieldSchema> ColumnsToHive(const Json& columns);

// Hive structs -> Glue inputs (DatabaseInput, TableInput, PartitionInput,
// UserDefinedFunctionInput). Names are folded to lowercase, as Glue and Hive both do.
Json DatabaseInputFromHive(const wire::Database& database);
Json TableInputFromHive(const wire::Table& table);
Json PartitionInputFromHive(const wire::Partition& partition);
Json FunctionInputFromHive(const wire::Function& function);
Json StorageDescriptorFromHive(const wire::StorageDescriptor& sd);

// Hive's partition name for `values` of the table's `keys`: "k1=v1/k2=v2", each key and value
// escaped as Hive's FileUtils.escapePathName does (%XX for '/', '=', '%', ':', control
// characters and the rest of Hive's set); an empty value or the null stands as
// __HIVE_DEFAULT_PARTITION__.
std::string PartitionName(const std::vector<std::string>& keys, const std::vector<std::string>& values);
// One key or value of a partition name with Hive's %XX escapes undone.
std::string UnescapePathName(std::string_view text);
// The values of a partition name, in the order of `keys`. InvalidInput when a component is not
// key=value, names a key the table does not have, or a key is missing.
Result<std::vector<std::string>> PartitionValuesFromName(std::string_view name,
                                                        const std::vector<std::string>& keys);

// The Glue GetPartitions Expression for a Hive metastore filter string as Spark, Hive and
// Trino send it to get_partitions_by_filter: `part = "x" and (year > 2020 or year = 1999)`.
// The grammars are close; what differs is rewritten: a "double-quoted" or 'single-quoted' Hive
// string (backslash keeps the next character, as Hive's lexer does) becomes a Glue 'string'
// literal ('' for a quote inside it). Everything else (keys, numbers, operators, AND/OR/NOT,
// parentheses, LIKE, BETWEEN, IN) passes through; the catalog's filter engine parses and checks
// the result (an unknown key or a bad literal is its InvalidInput). InvalidInput for an
// unterminated string or an empty filter.
Result<std::string> HiveFilterToExpression(std::string_view filter);

// The Glue Expression selecting the partitions whose leading keys equal the non-empty `values`
// (get_partitions_ps: an empty value matches anything). Empty when nothing is constrained.
std::string PartialSpecExpression(const std::vector<std::string>& keys,
                                  const std::vector<std::string>& values);

// Glue's seconds (a JSON number) as Hive's i32 seconds, clamped; 0 when absent.
int32_t HiveTime(const Json& value);

}  // namespace openglue::hms
