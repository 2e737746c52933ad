#include "hms/metastore_handler.h"

#include <algorithm>
#include <stdexcept>
#include <utility>

#include "catalog/catalog_util.h"
#include "common/logging.h"
#include "common/strings.h"
#include "hms/translate.h"

namespace openglue::hms {
namespace {

// The Hive exceptions a method declares (its `throws`): a failure is thrown as the first that
// fits, else as MetaException when declared, else as an undeclared error that the generated
// processor answers with TApplicationException.
constexpr unsigned kThrowsMeta = 1;
constexpr unsigned kThrowsNoSuch = 2;
constexpr unsigned kThrowsAlready = 4;
constexpr unsigned kThrowsInvalidObject = 8;
constexpr unsigned kThrowsInvalidOperation = 16;
constexpr unsigned kThrowsUnknownTable = 32;
constexpr unsigned kThrowsUnknownDb = 64;

// Glue's per-call limits of the batch operations used here.
constexpr size_t kBatchCreate = 100;
constexpr size_t kBatchGet = 1000;

template <typename E>
[[noreturn]] void ThrowAs(const std::string& message) {
  E e;
  e.__set_message(message);
  throw e;
}

[[noreturn]] void Raise(const Status& st, unsigned allowed) {
  const std::string& message = st.message();
  switch (st.code()) {
    case StatusCode::kEntityNotFound:
      if (allowed & kThrowsNoSuch) ThrowAs<wire::NoSuchObjectException>(message);
      if (allowed & kThrowsUnknownTable) ThrowAs<wire::UnknownTableException>(message);
      if (allowed & kThrowsInvalidOperation) ThrowAs<wire::InvalidOperationException>(message);
      if (allowed & kThrowsInvalidObject) ThrowAs<wire::InvalidObjectException>(message);
      break;
    case StatusCode::kAlreadyExists:
      if (allowed & kThrowsAlready) ThrowAs<wire::AlreadyExistsException>(message);
      if (allowed & kThrowsInvalidOperation) ThrowAs<wire::InvalidOperationException>(message);
      break;
    case StatusCode::kInvalidInput:
      if (allowed & kThrowsInvalidObject) ThrowAs<wire::InvalidObjectException>(message);
      if (allowed & kThrowsInvalidOperation) ThrowAs<wire::InvalidOperationException>(message);
      break;
    default:
      break;
  }
  if (allowed & kThrowsMeta) ThrowAs<wire::MetaException>(std::string(GlueErrorName(st.code())) + ": " + message);
  throw std::runtime_error(std::string(GlueErrorName(st.code())) + ": " + message);
}

Status StatusFromGlueError(const Json& error) {
  std::string code = error.value("ErrorCode", std::string());
  std::string message = error.value("ErrorMessage", std::string());
  if (code == "EntityNotFoundException") return Status::EntityNotFound(message);
  if (code == "AlreadyExistsException") return Status::AlreadyExists(message);
  if (code == "InvalidInputException") return Status::InvalidInput(message);
  return Status::Internal(code + ": " + message);
}

std::string Lower(const std::string& name) { return ToLower(name); }

std::vector<std::string> KeyNames(const Json& table) {
  std::vector<std::string> keys;
  for (const Json& key : table.value("PartitionKeys", Json::array())) {
    keys.push_back(ToLower(key.value("Name", std::string())));
  }
  return keys;
}

std::vector<std::string> Values(const Json& partition) {
  std::vector<std::string> values;
  for (const Json& v : partition.value("Values", Json::array())) {
    values.push_back(v.is_string() ? v.get<std::string>() : std::string());
  }
  return values;
}

Json ValuesJson(const std::vector<std::string>& values) {
  Json out = Json::array();
  for (const auto& v : values) out.push_back(SanitizeUtf8(v));
  return out;
}

int64_t Limit(int16_t max_parts) { return max_parts < 0 ? -1 : max_parts; }

}  // namespace

Json MetastoreHandler::Call(const char* operation, Operation method, Json request, unsigned allowed,
                            bool validate) {
  if (!caller_.refused.ok()) Raise(caller_.refused, allowed);
  if (options_.authorize) {
    Status st = options_.authorize(caller_.principal, std::string("glue:") + operation);
    if (!st.ok()) {
      OG_LOG(kInfo, "HMS: " << operation << " refused: " << st.message());
      Raise(st, allowed);
    }
  }
  if (validate && options_.validate) {
    Status st = options_.validate(operation, &request);
    if (!st.ok()) Raise(st, allowed);
  }
  Result<Json> result = (catalog_->*method)(request);
  if (!result.ok()) Raise(result.status(), allowed);
  return std::move(*result);
}

std::vector<Json> MetastoreHandler::CallAll(const char* operation, Operation method, Json request,
                                            const char* member, unsigned allowed, int64_t limit,
                                            bool validate) {
  std::vector<Json> items;
  while (true) {
    Json page = Call(operation, method, request, allowed, validate);
    for (Json& item : page[member]) {
      if (limit >= 0 && static_cast<int64_t>(items.size()) >= limit) return items;
      items.push_back(std::move(item));
    }
    if (!page.contains("NextToken") || !page["NextToken"].is_string() || page["NextToken"] == "") break;
    request["NextToken"] = page["NextToken"];
  }
  return items;
}

Json MetastoreHandler::LoadTable(const std::string& db, const std::string& table, unsigned allowed) {
  Json response = Call("GetTable", &catalog::Catalog::GetTable,
                       Json{{"DatabaseName", Lower(db)}, {"Name", Lower(table)}}, allowed);
  return response["Table"];
}

std::vector<std::string> MetastoreHandler::DatabaseNames(const std::string& pattern) {
  std::vector<Json> databases = CallAll("GetDatabases", &catalog::Catalog::GetDatabases,
                                        Json{{"MaxResults", 100}}, "DatabaseList", kThrowsMeta);
  auto matcher = catalog::NamePattern::Make(pattern.empty() ? "*" : pattern);
  if (!matcher.ok()) Raise(matcher.status(), kThrowsMeta);
  std::vector<std::string> names;
  for (const Json& db : databases) {
    std::string name = db.value("Name", std::string());
    if (matcher->Matches(name)) names.push_back(name);
  }
  return names;
}

std::vector<Json> MetastoreHandler::Partitions(const std::string& db, const std::string& table,
                                               const std::string& expression, int64_t limit,
                                               unsigned allowed, bool exclude_columns) {
  Json request{{"DatabaseName", Lower(db)}, {"TableName", Lower(table)}, {"MaxResults", 1000}};
  if (!expression.empty()) request["Expression"] = expression;
  if (exclude_columns) request["ExcludeColumnSchema"] = true;
  if (limit == 0) return {};
  // Not validated against the Glue model: its 2048-character cap on Expression is Glue's API
  // limit, while Hive clients send longer filters (Spark turns an IN list of up to 1000 values
  // into ORs). The catalog's filter engine bounds its own work (nesting depth, one pass).
  return CallAll("GetPartitions", &catalog::Catalog::GetPartitions, std::move(request), "Partitions",
                 allowed, limit, /*validate=*/false);
}

// ---- Configuration and session --------------------------------------------------------------

void MetastoreHandler::getMetaConf(std::string& _return, const std::string& key) { _return.clear(); }

void MetastoreHandler::setMetaConf(const std::string& key, const std::string& value) {}

void MetastoreHandler::get_config_value(std::string& _return, const std::string& name,
                                        const std::string& defaultValue) {
  _return = defaultValue;
}

void MetastoreHandler::set_ugi(std::vector<std::string>& _return, const std::string& user_name,
                               const std::vector<std::string>& group_names) {
  _return = group_names;
}

void MetastoreHandler::shutdown() {}

void MetastoreHandler::get_current_notificationEventId(CurrentNotificationEventId& _return) {
  _return.__set_eventId(0);
}

// ---- Databases ---------------------------------------------------------------------------------

void MetastoreHandler::create_database(const Database& database) {
  Call("CreateDatabase", &catalog::Catalog::CreateDatabase,
       Json{{"DatabaseInput", DatabaseInputFromHive(database)}},
       kThrowsAlready | kThrowsInvalidObject | kThrowsMeta);
}

void MetastoreHandler::get_database(Database& _return, const std::string& name) {
  Json response = Call("GetDatabase", &catalog::Catalog::GetDatabase, Json{{"Name", Lower(name)}},
                       kThrowsNoSuch | kThrowsMeta);
  _return = DatabaseToHive(response["Database"], options_.default_location_root);
}

void MetastoreHandler::drop_database(const std::string& name, const bool deleteData, const bool cascade) {
  constexpr unsigned allowed = kThrowsNoSuch | kThrowsInvalidOperation | kThrowsMeta;
  if (Lower(name) == "default") ThrowAs<wire::MetaException>("Can not drop default database");
  if (!cascade) {
    Json tables = Call("GetTables", &catalog::Catalog::GetTables,
                       Json{{"DatabaseName", Lower(name)}, {"MaxResults", 1}}, allowed);
    if (!tables["TableList"].empty())
      ThrowAs<wire::InvalidOperationException>("Database " + Lower(name) +
                                               " is not empty. One or more tables exist.");
  }
  Call("DeleteDatabase", &catalog::Catalog::DeleteDatabase, Json{{"Name", Lower(name)}}, allowed);
}

void MetastoreHandler::get_databases(std::vector<std::string>& _return, const std::string& pattern) {
  _return = DatabaseNames(pattern);
}

void MetastoreHandler::get_all_databases(std::vector<std::string>& _return) { _return = DatabaseNames("*"); }

void MetastoreHandler::alter_database(const std::string& dbname, const Database& db) {
  Json input = DatabaseInputFromHive(db);
  input["Name"] = Lower(dbname);
  Call("UpdateDatabase", &catalog::Catalog::UpdateDatabase,
       Json{{"Name", Lower(dbname)}, {"DatabaseInput", std::move(input)}}, kThrowsNoSuch | kThrowsMeta);
}

// ---- Tables ------------------------------------------------------------------------------------

void MetastoreHandler::get_fields(std::vector<FieldSchema>& _return, const std::string& db_name,
                                  const std::string& table_name) {
  Json table = LoadTable(db_name, table_name, kThrowsUnknownTable | kThrowsMeta);
  _return = TableToHive(table).sd.cols;
}

void MetastoreHandler::get_schema(std::vector<FieldSchema>& _return, const std::string& db_name,
                                  const std::string& table_name) {
  wire::Table table = TableToHive(LoadTable(db_name, table_name, kThrowsUnknownTable | kThrowsMeta));
  _return = table.sd.cols;
  _return.insert(_return.end(), table.partitionKeys.begin(), table.partitionKeys.end());
}

void MetastoreHandler::create_table(const Table& tbl) {
  constexpr unsigned allowed = kThrowsAlready | kThrowsInvalidObject | kThrowsMeta | kThrowsNoSuch;
  Json input = TableInputFromHive(tbl);
  if (!input["StorageDescriptor"].contains("Location") && tbl.tableType != "VIRTUAL_VIEW") {
    // As Hive's metastore does: a table created without a location goes in its database's
    // folder (clients such as Spark add partitions relative to it).
    Database db;
    get_database(db, tbl.dbName);  // NoSuchObjectException when the database is missing
    std::string root = db.locationUri;
    while (!root.empty() && root.back() == '/') root.pop_back();
    input["StorageDescriptor"]["Location"] = root + "/" + input["Name"].get<std::string>();
  }
  Call("CreateTable", &catalog::Catalog::CreateTable,
       Json{{"DatabaseName", Lower(tbl.dbName)}, {"TableInput", std::move(input)}}, allowed);
}

void MetastoreHandler::create_table_with_environment_context(const Table& tbl,
                                                             const EnvironmentContext& environment_context) {
  create_table(tbl);
}

void MetastoreHandler::drop_table(const std::string& dbname, const std::string& name, const bool deleteData) {
  Call("DeleteTable", &catalog::Catalog::DeleteTable,
       Json{{"DatabaseName", Lower(dbname)}, {"Name", Lower(name)}}, kThrowsNoSuch | kThrowsMeta);
}

void MetastoreHandler::drop_table_with_environment_context(const std::string& dbname, const std::string& name,
                                                           const bool deleteData,
                                                           const EnvironmentContext& environment_context) {
  drop_table(dbname, name, deleteData);
}

void MetastoreHandler::get_tables(std::vector<std::string>& _return, const std::string& db_name,
                                  const std::string& pattern) {
  get_tables_by_type(_return, db_name, pattern, "");
}

void MetastoreHandler::get_tables_by_type(std::vector<std::string>& _return, const std::string& db_name,
                                          const std::string& pattern, const std::string& tableType) {
  _return.clear();
  Json request{{"DatabaseName", Lower(db_name)}, {"MaxResults", 100}};
  if (!pattern.empty()) request["Expression"] = pattern;
  std::vector<Json> tables;
  try {
    tables = CallAll("GetTables", &catalog::Catalog::GetTables, std::move(request), "TableList",
                     kThrowsNoSuch | kThrowsMeta);
  } catch (const wire::NoSuchObjectException&) {
    return;  // Hive lists no tables of a database that does not exist
  }
  for (const Json& table : tables) {
    if (!tableType.empty() && TableToHive(table).tableType != tableType) continue;
    _return.push_back(table.value("Name", std::string()));
  }
}

void MetastoreHandler::get_table_meta(std::vector<TableMeta>& _return, const std::string& db_patterns,
                                      const std::string& tbl_patterns, const std::vector<std::string>& tbl_types) {
  _return.clear();
  for (const std::string& db : DatabaseNames(db_patterns)) {
    Json request{{"DatabaseName", db}, {"MaxResults", 100}};
    if (!tbl_patterns.empty()) request["Expression"] = tbl_patterns;
    std::vector<Json> tables;
    try {
      tables = CallAll("GetTables", &catalog::Catalog::GetTables, std::move(request), "TableList",
                       kThrowsNoSuch | kThrowsMeta);
    } catch (const wire::NoSuchObjectException&) {
      continue;  // dropped meanwhile
    }
    for (const Json& table : tables) {
      wire::Table hive = TableToHive(table);
      if (!tbl_types.empty() &&
          std::find(tbl_types.begin(), tbl_types.end(), hive.tableType) == tbl_types.end())
        continue;
      TableMeta meta;
      meta.__set_dbName(db);
      meta.__set_tableName(hive.tableName);
      meta.__set_tableType(hive.tableType);
      if (table.contains("Description")) meta.__set_comments(table.value("Description", std::string()));
      _return.push_back(std::move(meta));
    }
  }
}

void MetastoreHandler::get_all_tables(std::vector<std::string>& _return, const std::string& db_name) {
  get_tables_by_type(_return, db_name, "", "");
}

void MetastoreHandler::get_table(Table& _return, const std::string& dbname, const std::string& tbl_name) {
  _return = TableToHive(LoadTable(dbname, tbl_name, kThrowsMeta | kThrowsNoSuch));
}

void MetastoreHandler::get_table_objects_by_name(std::vector<Table>& _return, const std::string& dbname,
                                                 const std::vector<std::string>& tbl_names) {
  _return.clear();
  for (const std::string& name : tbl_names) {
    try {
      _return.push_back(TableToHive(LoadTable(dbname, name, kThrowsNoSuch)));
    } catch (const wire::NoSuchObjectException&) {
      // Hive leaves out the names that do not exist
    }
  }
}

void MetastoreHandler::get_table_req(GetTableResult& _return, const GetTableRequest& req) {
  _return.__set_table(TableToHive(LoadTable(req.dbName, req.tblName, kThrowsMeta | kThrowsNoSuch)));
}

void MetastoreHandler::get_table_objects_by_name_req(GetTablesResult& _return, const GetTablesRequest& req) {
  std::vector<std::string> names = req.tblNames;
  if (!req.__isset.tblNames) {
    Json request{{"DatabaseName", Lower(req.dbName)}, {"MaxResults", 100}};
    for (const Json& t : CallAll("GetTables", &catalog::Catalog::GetTables, std::move(request), "TableList",
                                 kThrowsUnknownDb | kThrowsMeta))
      names.push_back(t.value("Name", std::string()));
  }
  std::vector<Table> tables;
  get_table_objects_by_name(tables, req.dbName, names);
  _return.__set_tables(tables);
}

void MetastoreHandler::AlterTable(const std::string& db, const std::string& name, const Table& table) {
  if (Lower(table.tableName) != Lower(name) || (!table.dbName.empty() && Lower(table.dbName) != Lower(db)))
    ThrowAs<wire::InvalidOperationException>(
        "Renaming a table (" + Lower(db) + "." + Lower(name) + " to " + Lower(table.dbName) + "." +
        Lower(table.tableName) + ") is not supported by the OpenGlue metastore");
  Call("UpdateTable", &catalog::Catalog::UpdateTable,
       Json{{"DatabaseName", Lower(db)}, {"TableInput", TableInputFromHive(table)}},
       kThrowsInvalidOperation | kThrowsMeta);
}

void MetastoreHandler::alter_table(const std::string& dbname, const std::string& tbl_name, const Table& new_tbl) {
  AlterTable(dbname, tbl_name, new_tbl);
}

void MetastoreHandler::alter_table_with_environment_context(const std::string& dbname, const std::string& tbl_name,
                                                            const Table& new_tbl,
                                                            const EnvironmentContext& environment_context) {
  AlterTable(dbname, tbl_name, new_tbl);
}

void MetastoreHandler::alter_table_with_cascade(const std::string& dbname, const std::string& tbl_name,
                                                const Table& new_tbl, const bool cascade) {
  AlterTable(dbname, tbl_name, new_tbl);
}

// ---- Partitions --------------------------------------------------------------------------------

void MetastoreHandler::AddPartitions(const std::vector<Partition>& parts, bool if_not_exists, unsigned allowed) {
  // Glue's BatchCreatePartition applies each item on its own; a failed item fails the call
  // (after the items before it), unless it already exists and the client said ifNotExists.
  for (size_t start = 0; start < parts.size(); start += kBatchCreate) {
    size_t end = std::min(parts.size(), start + kBatchCreate);
    const Partition& first = parts[start];
    Json inputs = Json::array();
    for (size_t i = start; i < end; ++i) {
      if (Lower(parts[i].dbName) != Lower(first.dbName) || Lower(parts[i].tableName) != Lower(first.tableName))
        ThrowAs<wire::MetaException>("All partitions added in one call must be of the same table");
      inputs.push_back(PartitionInputFromHive(parts[i]));
    }
    Json response = Call("BatchCreatePartition", &catalog::Catalog::BatchCreatePartition,
                         Json{{"DatabaseName", Lower(first.dbName)},
                              {"TableName", Lower(first.tableName)},
                              {"PartitionInputList", std::move(inputs)}},
                         allowed);
    for (const Json& error : response.value("Errors", Json::array())) {
      Status st = StatusFromGlueError(error.value("ErrorDetail", Json::object()));
      if (if_not_exists && st.code() == StatusCode::kAlreadyExists) continue;
      Raise(st, allowed);
    }
  }
}

void MetastoreHandler::add_partition(Partition& _return, const Partition& new_part) {
  constexpr unsigned allowed = kThrowsInvalidObject | kThrowsAlready | kThrowsMeta;
  Call("CreatePartition", &catalog::Catalog::CreatePartition,
       Json{{"DatabaseName", Lower(new_part.dbName)},
            {"TableName", Lower(new_part.tableName)},
            {"PartitionInput", PartitionInputFromHive(new_part)}},
       allowed);
  get_partition(_return, new_part.dbName, new_part.tableName, new_part.values);
}

void MetastoreHandler::add_partition_with_environment_context(Partition& _return, const Partition& new_part,
                                                              const EnvironmentContext& environment_context) {
  add_partition(_return, new_part);
}

int32_t MetastoreHandler::add_partitions(const std::vector<Partition>& new_parts) {
  AddPartitions(new_parts, false, kThrowsInvalidObject | kThrowsAlready | kThrowsMeta);
  return static_cast<int32_t>(new_parts.size());
}

void MetastoreHandler::add_partitions_req(AddPartitionsResult& _return, const AddPartitionsRequest& request) {
  std::vector<Partition> parts = request.parts;
  for (Partition& p : parts) {
    p.__set_dbName(request.dbName);
    p.__set_tableName(request.tblName);
  }
  AddPartitions(parts, request.ifNotExists, kThrowsInvalidObject | kThrowsAlready | kThrowsMeta);
  if (!request.__isset.needResult || request.needResult) _return.__set_partitions(parts);
}

bool MetastoreHandler::DropPartition(const std::string& db, const std::string& table,
                                     const std::vector<std::string>& values) {
  Call("DeletePartition", &catalog::Catalog::DeletePartition,
       Json{{"DatabaseName", Lower(db)}, {"TableName", Lower(table)}, {"PartitionValues", ValuesJson(values)}},
       kThrowsNoSuch | kThrowsMeta);
  return true;
}

bool MetastoreHandler::drop_partition(const std::string& db_name, const std::string& tbl_name,
                                      const std::vector<std::string>& part_vals, const bool deleteData) {
  return DropPartition(db_name, tbl_name, part_vals);
}

bool MetastoreHandler::drop_partition_with_environment_context(const std::string& db_name,
                                                               const std::string& tbl_name,
                                                               const std::vector<std::string>& part_vals,
                                                               const bool deleteData,
                                                               const EnvironmentContext& environment_context) {
  return DropPartition(db_name, tbl_name, part_vals);
}

bool MetastoreHandler::drop_partition_by_name(const std::string& db_name, const std::string& tbl_name,
                                              const std::string& part_name, const bool deleteData) {
  Json table = LoadTable(db_name, tbl_name, kThrowsNoSuch | kThrowsMeta);
  auto values = PartitionValuesFromName(part_name, KeyNames(table));
  if (!values.ok()) Raise(values.status(), kThrowsMeta);
  return DropPartition(db_name, tbl_name, *values);
}

void MetastoreHandler::drop_partitions_req(DropPartitionsResult& _return, const DropPartitionsRequest& req) {
  constexpr unsigned allowed = kThrowsNoSuch | kThrowsMeta;
  if (!req.parts.__isset.names)
    ThrowAs<wire::MetaException>("drop_partitions_req by expression is not supported; give partition names");
  Json table = LoadTable(req.dbName, req.tblName, allowed);
  std::vector<std::string> keys = KeyNames(table);
  std::vector<Partition> dropped;
  bool if_exists = !req.__isset.ifExists || req.ifExists;
  for (const std::string& name : req.parts.names) {
    auto values = PartitionValuesFromName(name, keys);
    if (!values.ok()) Raise(values.status(), allowed);
    try {
      Partition p;
      get_partition(p, req.dbName, req.tblName, *values);
      DropPartition(req.dbName, req.tblName, *values);
      dropped.push_back(std::move(p));
    } catch (const wire::NoSuchObjectException&) {
      if (!if_exists) throw;
    }
  }
  if (!req.__isset.needResult || req.needResult) _return.__set_partitions(dropped);
}

void MetastoreHandler::get_partition(Partition& _return, const std::string& db_name, const std::string& tbl_name,
                                     const std::vector<std::string>& part_vals) {
  constexpr unsigned allowed = kThrowsMeta | kThrowsNoSuch;
  Json table = LoadTable(db_name, tbl_name, allowed);
  Json response = Call("GetPartition", &catalog::Catalog::GetPartition,
                       Json{{"DatabaseName", Lower(db_name)},
                            {"TableName", Lower(tbl_name)},
                            {"PartitionValues", ValuesJson(part_vals)}},
                       allowed);
  _return = PartitionToHive(response["Partition"], table);
}

void MetastoreHandler::get_partition_with_auth(Partition& _return, const std::string& db_name,
                                               const std::string& tbl_name, const std::vector<std::string>& part_vals,
                                               const std::string& user_name,
                                               const std::vector<std::string>& group_names) {
  get_partition(_return, db_name, tbl_name, part_vals);
}

void MetastoreHandler::get_partition_by_name(Partition& _return, const std::string& db_name,
                                             const std::string& tbl_name, const std::string& part_name) {
  Json table = LoadTable(db_name, tbl_name, kThrowsMeta | kThrowsNoSuch);
  auto values = PartitionValuesFromName(part_name, KeyNames(table));
  if (!values.ok()) Raise(values.status(), kThrowsMeta);
  get_partition(_return, db_name, tbl_name, *values);
}

void MetastoreHandler::get_partitions(std::vector<Partition>& _return, const std::string& db_name,
                                      const std::string& tbl_name, const int16_t max_parts) {
  get_partitions_ps(_return, db_name, tbl_name, {}, max_parts);
}

void MetastoreHandler::get_partitions_with_auth(std::vector<Partition>& _return, const std::string& db_name,
                                                const std::string& tbl_name, const int16_t max_parts,
                                                const std::string& user_name,
                                                const std::vector<std::string>& group_names) {
  get_partitions(_return, db_name, tbl_name, max_parts);
}

void MetastoreHandler::get_partition_names(std::vector<std::string>& _return, const std::string& db_name,
                                           const std::string& tbl_name, const int16_t max_parts) {
  get_partition_names_ps(_return, db_name, tbl_name, {}, max_parts);
}

void MetastoreHandler::get_partitions_ps(std::vector<Partition>& _return, const std::string& db_name,
                                         const std::string& tbl_name, const std::vector<std::string>& part_vals,
                                         const int16_t max_parts) {
  constexpr unsigned allowed = kThrowsMeta | kThrowsNoSuch;
  Json table = LoadTable(db_name, tbl_name, allowed);
  _return.clear();
  for (const Json& p : Partitions(db_name, tbl_name, PartialSpecExpression(KeyNames(table), part_vals),
                                  Limit(max_parts), allowed, false))
    _return.push_back(PartitionToHive(p, table));
}

void MetastoreHandler::get_partitions_ps_with_auth(std::vector<Partition>& _return, const std::string& db_name,
                                                   const std::string& tbl_name,
                                                   const std::vector<std::string>& part_vals, const int16_t max_parts,
                                                   const std::string& user_name,
                                                   const std::vector<std::string>& group_names) {
  get_partitions_ps(_return, db_name, tbl_name, part_vals, max_parts);
}

void MetastoreHandler::get_partition_names_ps(std::vector<std::string>& _return, const std::string& db_name,
                                              const std::string& tbl_name, const std::vector<std::string>& part_vals,
                                              const int16_t max_parts) {
  constexpr unsigned allowed = kThrowsMeta | kThrowsNoSuch;
  Json table = LoadTable(db_name, tbl_name, allowed);
  std::vector<std::string> keys = KeyNames(table);
  _return.clear();
  for (const Json& p : Partitions(db_name, tbl_name, PartialSpecExpression(keys, part_vals), Limit(max_parts),
                                  allowed, true))
    _return.push_back(PartitionName(keys, Values(p)));
}

void MetastoreHandler::get_partitions_by_filter(std::vector<Partition>& _return, const std::string& db_name,
                                                const std::string& tbl_name, const std::string& filter,
                                                const int16_t max_parts) {
  constexpr unsigned allowed = kThrowsMeta | kThrowsNoSuch;
  Json table = LoadTable(db_name, tbl_name, allowed);
  std::string expression;
  if (!Trim(filter).empty()) {
    auto translated = HiveFilterToExpression(filter);
    if (!translated.ok()) Raise(translated.status(), allowed);
    expression = *translated;
  }
  _return.clear();
  for (const Json& p : Partitions(db_name, tbl_name, expression, Limit(max_parts), allowed, false))
    _return.push_back(PartitionToHive(p, table));
  OG_LOG(kInfo, "HMS get_partitions_by_filter " << Lower(db_name) << "." << Lower(tbl_name) << " filter ["
                                                << SanitizeUtf8(TruncateUtf8(filter, 512)) << "]: "
                                                << _return.size() << " partition(s)");
}

int32_t MetastoreHandler::get_num_partitions_by_filter(const std::string& db_name, const std::string& tbl_name,
                                                       const std::string& filter) {
  std::vector<Partition> partitions;
  get_partitions_by_filter(partitions, db_name, tbl_name, filter, -1);
  return static_cast<int32_t>(partitions.size());
}

void MetastoreHandler::get_partitions_by_names(std::vector<Partition>& _return, const std::string& db_name,
                                               const std::string& tbl_name, const std::vector<std::string>& names) {
  constexpr unsigned allowed = kThrowsMeta | kThrowsNoSuch;
  Json table = LoadTable(db_name, tbl_name, allowed);
  std::vector<std::string> keys = KeyNames(table);
  _return.clear();
  for (size_t start = 0; start < names.size(); start += kBatchGet) {
    Json wanted = Json::array();
    for (size_t i = start; i < std::min(names.size(), start + kBatchGet); ++i) {
      auto values = PartitionValuesFromName(names[i], keys);
      if (!values.ok()) Raise(values.status(), allowed);
      wanted.push_back({{"Values", ValuesJson(*values)}});
    }
    Json response = Call("BatchGetPartition", &catalog::Catalog::BatchGetPartition,
                         Json{{"DatabaseName", Lower(db_name)},
                              {"TableName", Lower(tbl_name)},
                              {"PartitionsToGet", std::move(wanted)}},
                         allowed);
    for (const Json& p : response.value("Partitions", Json::array())) _return.push_back(PartitionToHive(p, table));
  }
}

void MetastoreHandler::AlterPartition(const std::string& db, const std::string& table, const Partition& partition) {
  Call("UpdatePartition", &catalog::Catalog::UpdatePartition,
       Json{{"DatabaseName", Lower(db)},
            {"TableName", Lower(table)},
            {"PartitionValueList", ValuesJson(partition.values)},
            {"PartitionInput", PartitionInputFromHive(partition)}},
       kThrowsInvalidOperation | kThrowsMeta);
}

void MetastoreHandler::alter_partition(const std::string& db_name, const std::string& tbl_name,
                                       const Partition& new_part) {
  AlterPartition(db_name, tbl_name, new_part);
}

void MetastoreHandler::alter_partitions(const std::string& db_name, const std::string& tbl_name,
                                        const std::vector<Partition>& new_parts) {
  for (const Partition& p : new_parts) AlterPartition(db_name, tbl_name, p);
}

void MetastoreHandler::alter_partitions_with_environment_context(const std::string& db_name,
                                                                 const std::string& tbl_name,
                                                                 const std::vector<Partition>& new_parts,
                                                                 const EnvironmentContext& environment_context) {
  alter_partitions(db_name, tbl_name, new_parts);
}

void MetastoreHandler::alter_partition_with_environment_context(const std::string& db_name,
                                                                const std::string& tbl_name,
                                                                const Partition& new_part,
                                                                const EnvironmentContext& environment_context) {
  AlterPartition(db_name, tbl_name, new_part);
}

void MetastoreHandler::partition_name_to_vals(std::vector<std::string>& _return, const std::string& part_name) {
  _return.clear();
  for (const std::string& part : Split(part_name, '/')) {
    if (part.empty()) continue;
    size_t eq = part.find('=');
    if (eq == std::string::npos) ThrowAs<wire::MetaException>("Invalid partition name: " + SanitizeUtf8(part_name));
    _return.push_back(UnescapePathName(part.substr(eq + 1)));
  }
}

void MetastoreHandler::partition_name_to_spec(std::map<std::string, std::string>& _return,
                                              const std::string& part_name) {
  _return.clear();
  for (const std::string& part : Split(part_name, '/')) {
    if (part.empty()) continue;
    size_t eq = part.find('=');
    if (eq == std::string::npos) ThrowAs<wire::MetaException>("Invalid partition name: " + SanitizeUtf8(part_name));
    _return[UnescapePathName(part.substr(0, eq))] = UnescapePathName(part.substr(eq + 1));
  }
}

// ---- Functions ---------------------------------------------------------------------------------

void MetastoreHandler::create_function(const Function& func) {
  Call("CreateUserDefinedFunction", &catalog::Catalog::CreateUserDefinedFunction,
       Json{{"DatabaseName", Lower(func.dbName)}, {"FunctionInput", FunctionInputFromHive(func)}},
       kThrowsAlready | kThrowsInvalidObject | kThrowsMeta | kThrowsNoSuch);
}

void MetastoreHandler::drop_function(const std::string& dbName, const std::string& funcName) {
  Call("DeleteUserDefinedFunction", &catalog::Catalog::DeleteUserDefinedFunction,
       Json{{"DatabaseName", Lower(dbName)}, {"FunctionName", Lower(funcName)}}, kThrowsNoSuch | kThrowsMeta);
}

void MetastoreHandler::get_functions(std::vector<std::string>& _return, const std::string& dbName,
                                     const std::string& pattern) {
  _return.clear();
  for (const Json& f : CallAll("GetUserDefinedFunctions", &catalog::Catalog::GetUserDefinedFunctions,
                               Json{{"DatabaseName", Lower(dbName)},
                                    {"Pattern", pattern.empty() ? std::string("*") : pattern},
                                    {"MaxResults", 100}},
                               "UserDefinedFunctions", kThrowsMeta))
    _return.push_back(f.value("FunctionName", std::string()));
}

void MetastoreHandler::get_function(Function& _return, const std::string& dbName, const std::string& funcName) {
  Json response = Call("GetUserDefinedFunction", &catalog::Catalog::GetUserDefinedFunction,
                       Json{{"DatabaseName", Lower(dbName)}, {"FunctionName", Lower(funcName)}},
                       kThrowsMeta | kThrowsNoSuch);
  _return = FunctionToHive(response["UserDefinedFunction"]);
}

void MetastoreHandler::get_all_functions(GetAllFunctionsResponse& _return) {
  std::vector<Function> functions;
  for (const Json& f : CallAll("GetUserDefinedFunctions", &catalog::Catalog::GetUserDefinedFunctions,
                               Json{{"Pattern", "*"}, {"MaxResults", 100}}, "UserDefinedFunctions", kThrowsMeta))
    functions.push_back(FunctionToHive(f));
  _return.__set_functions(functions);
}

}  // namespace openglue::hms
