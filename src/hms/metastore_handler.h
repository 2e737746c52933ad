// MetastoreHandler: ThriftHiveMetastore's methods over the Glue catalog (see hms_server.h for
// the contract and docs/metastore.md for the list). Each method builds the Glue request, checks
// it with HmsOptions::validate, calls the catalog operation and translates the answer
// (hms/translate.h); a failure is thrown as the Hive exception the method declares, which the
// generated Thrift processor writes back to the client (exceptions end there: never beyond
// this module). Stateless besides its borrowed catalog: thread-safe.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "ThriftHiveMetastore.h"
#include "catalog/catalog.h"
#include "common/json.h"
#include "common/status.h"
#include "hms/hms_server.h"

namespace openglue::hms {

class MetastoreHandler : public wire::ThriftHiveMetastoreIf {
 public:
  using Database = wire::Database;
  using Table = wire::Table;
  using Partition = wire::Partition;
  using FieldSchema = wire::FieldSchema;
  using EnvironmentContext = wire::EnvironmentContext;
  using TableMeta = wire::TableMeta;
  using GetTableResult = wire::GetTableResult;
  using GetTableRequest = wire::GetTableRequest;
  using GetTablesResult = wire::GetTablesResult;
  using GetTablesRequest = wire::GetTablesRequest;
  using AddPartitionsResult = wire::AddPartitionsResult;
  using AddPartitionsRequest = wire::AddPartitionsRequest;
  using DropPartitionsResult = wire::DropPartitionsResult;
  using DropPartitionsRequest = wire::DropPartitionsRequest;
  using Function = wire::Function;
  using GetAllFunctionsResponse = wire::GetAllFunctionsResponse;
  using CurrentNotificationEventId = wire::CurrentNotificationEventId;

  // Who a connection's calls are made as: HmsOptions::identify's answer.
  struct Caller {
    std::string principal;  // "" an operator
    Status refused;         // not OK: every catalog call answers this
  };

  // `catalog` is borrowed and must outlive the handler; `options` gives validate, authorize and
  // the default database location; `caller` is the connection's (one handler per connection).
  MetastoreHandler(catalog::Catalog* catalog, const HmsOptions& options, Caller caller = {})
      : catalog_(catalog), options_(options), caller_(std::move(caller)) {}

  void getMetaConf(std::string& _return, const std::string& key) override;
  void setMetaConf(const std::string& key, const std::string& value) override;
  void create_database(const Database& database) override;
  void get_database(Database& _return, const std::string& name) override;
  void drop_database(const std::string& name, const bool deleteData, const bool cascade) override;
  void get_databases(std::vector<std::string> & _return, const std::string& pattern) override;
  void get_all_databases(std::vector<std::string> & _return) override;
  void alter_database(const std::string& dbname, const Database& db) override;
  void get_fields(std::vector<FieldSchema> & _return, const std::string& db_name, const std::string& table_name) override;
  void get_schema(std::vector<FieldSchema> & _return, const std::string& db_name, const std::string& table_name) override;
  void create_table(const Table& tbl) override;
  void create_table_with_environment_context(const Table& tbl, const EnvironmentContext& environment_context) override;
  void drop_table(const std::string& dbname, const std::string& name, const bool deleteData) override;
  void drop_table_with_environment_context(const std::string& dbname, const std::string& name, const bool deleteData, const EnvironmentContext& environment_context) override;
  void get_tables(std::vector<std::string> & _return, const std::string& db_name, const std::string& pattern) override;
  void get_tables_by_type(std::vector<std::string> & _return, const std::string& db_name, const std::string& pattern, const std::string& tableType) override;
  void get_table_meta(std::vector<TableMeta> & _return, const std::string& db_patterns, const std::string& tbl_patterns, const std::vector<std::string> & tbl_types) override;
  void get_all_tables(std::vector<std::string> & _return, const std::string& db_name) override;
  void get_table(Table& _return, const std::string& dbname, const std::string& tbl_name) override;
  void get_table_objects_by_name(std::vector<Table> & _return, const std::string& dbname, const std::vector<std::string> & tbl_names) override;
  void get_table_req(GetTableResult& _return, const GetTableRequest& req) override;
  void get_table_objects_by_name_req(GetTablesResult& _return, const GetTablesRequest& req) override;
  void alter_table(const std::string& dbname, const std::string& tbl_name, const Table& new_tbl) override;
  void alter_table_with_environment_context(const std::string& dbname, const std::string& tbl_name, const Table& new_tbl, const EnvironmentContext& environment_context) override;
  void alter_table_with_cascade(const std::string& dbname, const std::string& tbl_name, const Table& new_tbl, const bool cascade) override;
  void add_partition(Partition& _return, const Partition& new_part) override;
  void add_partition_with_environment_context(Partition& _return, const Partition& new_part, const EnvironmentContext& environment_context) override;
  int32_t add_partitions(const std::vector<Partition> & new_parts) override;
  void add_partitions_req(AddPartitionsResult& _return, const AddPartitionsRequest& request) override;
  bool drop_partition(const std::string& db_name, const std::string& tbl_name, const std::vector<std::string> & part_vals, const bool deleteData) override;
  bool drop_partition_with_environment_context(const std::string& db_name, const std::string& tbl_name, const std::vector<std::string> & part_vals, const bool deleteData, const EnvironmentContext& environment_context) override;
  bool drop_partition_by_name(const std::string& db_name, const std::string& tbl_name, const std::string& part_name, const bool deleteData) override;
  void drop_partitions_req(DropPartitionsResult& _return, const DropPartitionsRequest& req) override;
  void get_partition(Partition& _return, const std::string& db_name, const std::string& tbl_name, const std::vector<std::string> & part_vals) override;
  void get_partition_with_auth(Partition& _return, const std::string& db_name, const std::string& tbl_name, const std::vector<std::string> & part_vals, const std::string& user_name, const std::vector<std::string> & group_names) override;
  void get_partition_by_name(Partition& _return, const std::string& db_name, const std::string& tbl_name, const std::string& part_name) override;
  void get_partitions(std::vector<Partition> & _return, const std::string& db_name, const std::string& tbl_name, const int16_t max_parts) override;
  void get_partitions_with_auth(std::vector<Partition> & _return, const std::string& db_name, const std::string& tbl_name, const int16_t max_parts, const std::string& user_name, const std::vector<std::string> & group_names) override;
  void get_partition_names(std::vector<std::string> & _return, const std::string& db_name, const std::string& tbl_name, const int16_t max_parts) override;
  void get_partitions_ps(std::vector<Partition> & _return, const std::string& db_name, const std::string& tbl_name, const std::vector<std::string> & part_vals, const int16_t max_parts) override;
  void get_partitions_ps_with_auth(std::vector<Partition> & _return, const std::string& db_name, const std::string& tbl_name, const std::vector<std::string> & part_vals, const int16_t max_parts, const std::string& user_name, const std::vector<std::string> & group_names) override;
  void get_partition_names_ps(std::vector<std::string> & _return, const std::string& db_name, const std::string& tbl_name, const std::vector<std::string> & part_vals, const int16_t max_parts) override;
  void get_partitions_by_filter(std::vector<Partition> & _return, const std::string& db_name, const std::string& tbl_name, const std::string& filter, const int16_t max_parts) override;
  int32_t get_num_partitions_by_filter(const std::string& db_name, const std::string& tbl_name, const std::string& filter) override;
  void get_partitions_by_names(std::vector<Partition> & _return, const std::string& db_name, const std::string& tbl_name, const std::vector<std::string> & names) override;
  void alter_partition(const std::string& db_name, const std::string& tbl_name, const Partition& new_part) override;
  void alter_partitions(const std::string& db_name, const std::string& tbl_name, const std::vector<Partition> & new_parts) override;
  void alter_partitions_with_environment_context(const std::string& db_name, const std::string& tbl_name, const std::vector<Partition> & new_parts, const EnvironmentContext& environment_context) override;
  void alter_partition_with_environment_context(const std::string& db_name, const std::string& tbl_name, const Partition& new_part, const EnvironmentContext& environment_context) override;
  void get_config_value(std::string& _return, const std::string& name, const std::string& defaultValue) override;
  void partition_name_to_vals(std::vector<std::string> & _return, const std::string& part_name) override;
  void partition_name_to_spec(std::map<std::string, std::string> & _return, const std::string& part_name) override;
  void create_function(const Function& func) override;
  void drop_function(const std::string& dbName, const std::string& funcName) override;
  void get_functions(std::vector<std::string> & _return, const std::string& dbName, const std::string& pattern) override;
  void get_function(Function& _return, const std::string& dbName, const std::string& funcName) override;
  void get_all_functions(GetAllFunctionsResponse& _return) override;
  void set_ugi(std::vector<std::string> & _return, const std::string& user_name, const std::vector<std::string> & group_names) override;
  void get_current_notificationEventId(CurrentNotificationEventId& _return) override;
  void shutdown() override;

 private:
  using Operation = Result<Json> (catalog::Catalog::*)(const Json& request);
  // Validates `request` for `operation` (unless !validate), calls it, and throws the Hive
  // exception for a failure among `allowed` (a set of the kThrows* bits in the .cc).
  Json Call(const char* operation, Operation method, Json request, unsigned allowed, bool validate = true);
  // Every page of a paged Glue list operation: the `member` items, at most `limit` (<0: all).
  std::vector<Json> CallAll(const char* operation, Operation method, Json request, const char* member,
                            unsigned allowed, int64_t limit = -1, bool validate = true);
  Json LoadTable(const std::string& db, const std::string& table, unsigned allowed);
  std::vector<std::string> DatabaseNames(const std::string& pattern);
  std::vector<Json> Partitions(const std::string& db, const std::string& table, const std::string& expression,
                               int64_t limit, unsigned allowed, bool exclude_columns);
  void AddPartitions(const std::vector<Partition>& parts, bool if_not_exists, unsigned allowed);
  void AlterTable(const std::string& db, const std::string& name, const Table& table);
  void AlterPartition(const std::string& db, const std::string& table, const Partition& partition);
  bool DropPartition(const std::string& db, const std::string& table, const std::vector<std::string>& values);

  catalog::Catalog* catalog_;
  HmsOptions options_;
  const Caller caller_;
};

}  // namespace openglue::hms
