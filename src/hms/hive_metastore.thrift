// The subset of the Hive Metastore's Thrift interface (ThriftHiveMetastore, Hive 2.3) that
// OpenGlue serves, written from Hive's documented interface. Struct field ids, method names,
// argument ids and exception ids are Hive's, so the bytes on the wire match what
// HiveMetaStoreClient (Spark's built-in Hive 2.3.9 client, Trino, Hive) sends and expects.
// Fields a client may send that are not declared here (privileges, constraints) are skipped by
// the generated reader; methods not declared here answer TApplicationException UNKNOWN_METHOD.
//
// Fields Hive declares with default requiredness are `optional` here: the same bytes on the wire,
// but the generated C++ then writes only the fields the server sets, so an absent value reaches
// the client as null, as from Hive's own server (Spark tells a null view text from an empty one).
//
// Generated into the build directory at build time (CMakeLists.txt); never committed.

namespace cpp openglue.hms.wire

enum PrincipalType {
  USER = 1,
  ROLE = 2,
  GROUP = 3,
}

struct FieldSchema {
  1: optional string name,
  2: optional string type,
  3: optional string comment
}

struct Database {
  1: optional string name,
  2: optional string description,
  3: optional string locationUri,
  4: optional map<string, string> parameters,
  6: optional string ownerName,
  7: optional PrincipalType ownerType
}

struct SerDeInfo {
  1: optional string name,
  2: optional string serializationLib,
  3: optional map<string, string> parameters
}

struct Order {
  1: optional string col,
  2: optional i32 order
}

struct SkewedInfo {
  1: optional list<string> skewedColNames,
  2: optional list<list<string>> skewedColValues,
  3: optional map<string, string> skewedColValueLocationMaps
}

struct StorageDescriptor {
  1: optional list<FieldSchema> cols,
  2: optional string location,
  3: optional string inputFormat,
  4: optional string outputFormat,
  5: optional bool compressed,
  6: optional i32 numBuckets,
  7: optional SerDeInfo serdeInfo,
  8: optional list<string> bucketCols,
  9: optional list<Order> sortCols,
  10: optional map<string, string> parameters,
  11: optional SkewedInfo skewedInfo,
  12: optional bool storedAsSubDirectories
}

struct Table {
  1: optional string tableName,
  2: optional string dbName,
  3: optional string owner,
  4: optional i32 createTime,
  5: optional i32 lastAccessTime,
  6: optional i32 retention,
  7: optional StorageDescriptor sd,
  8: optional list<FieldSchema> partitionKeys,
  9: optional map<string, string> parameters,
  10: optional string viewOriginalText,
  11: optional string viewExpandedText,
  12: optional string tableType,
  14: optional bool temporary = false,
  15: optional bool rewriteEnabled
}

struct Partition {
  1: optional list<string> values,
  2: optional string dbName,
  3: optional string tableName,
  4: optional i32 createTime,
  5: optional i32 lastAccessTime,
  6: optional StorageDescriptor sd,
  7: optional map<string, string> parameters
}

struct EnvironmentContext {
  1: optional map<string, string> properties
}

struct AddPartitionsResult {
  1: optional list<Partition> partitions
}

struct AddPartitionsRequest {
  1: required string dbName,
  2: required string tblName,
  3: required list<Partition> parts,
  4: required bool ifNotExists,
  5: optional bool needResult = true
}

struct DropPartitionsResult {
  1: optional list<Partition> partitions
}

struct DropPartitionsExpr {
  1: required binary expr,
  2: optional i32 partArchiveLevel
}

union RequestPartsSpec {
  1: list<string> names,
  2: list<DropPartitionsExpr> exprs
}

struct DropPartitionsRequest {
  1: required string dbName,
  2: required string tblName,
  3: required RequestPartsSpec parts,
  4: optional bool deleteData,
  5: optional bool ifExists = true,
  6: optional bool ignoreProtection,
  7: optional EnvironmentContext environmentContext,
  8: optional bool needResult = true
}

enum FunctionType {
  JAVA = 1,
}

enum ResourceType {
  JAR = 1,
  FILE = 2,
  ARCHIVE = 3,
}

struct ResourceUri {
  1: optional ResourceType resourceType,
  2: optional string uri
}

struct Function {
  1: optional string functionName,
  2: optional string dbName,
  3: optional string className,
  4: optional string ownerName,
  5: optional PrincipalType ownerType,
  6: optional i32 createTime,
  7: optional FunctionType functionType,
  8: optional list<ResourceUri> resourceUris
}

struct GetAllFunctionsResponse {
  1: optional list<Function> functions
}

struct CurrentNotificationEventId {
  1: required i64 eventId
}

enum ClientCapability {
  TEST_CAPABILITY = 1,
  INSERT_ONLY_TABLES = 2
}

struct ClientCapabilities {
  1: required list<ClientCapability> values
}

struct GetTableRequest {
  1: required string dbName,
  2: required string tblName,
  3: optional ClientCapabilities capabilities
}

struct GetTableResult {
  1: required Table table
}

struct GetTablesRequest {
  1: required string dbName,
  2: optional list<string> tblNames,
  3: optional ClientCapabilities capabilities
}

struct GetTablesResult {
  1: required list<Table> tables
}

struct TableMeta {
  1: required string dbName,
  2: required string tableName,
  3: required string tableType,
  4: optional string comments
}

exception MetaException {
  1: string message
}

exception UnknownTableException {
  1: string message
}

exception UnknownDBException {
  1: string message
}

exception AlreadyExistsException {
  1: string message
}

exception InvalidObjectException {
  1: string message
}

exception NoSuchObjectException {
  1: string message
}

exception InvalidOperationException {
  1: string message
}

exception ConfigValSecurityException {
  1: string message
}

service ThriftHiveMetastore {
  string getMetaConf(1: string key) throws (1: MetaException o1)
  void setMetaConf(1: string key, 2: string value) throws (1: MetaException o1)

  void create_database(1: Database database)
      throws (1: AlreadyExistsException o1, 2: InvalidObjectException o2, 3: MetaException o3)
  Database get_database(1: string name) throws (1: NoSuchObjectException o1, 2: MetaException o2)
  void drop_database(1: string name, 2: bool deleteData, 3: bool cascade)
      throws (1: NoSuchObjectException o1, 2: InvalidOperationException o2, 3: MetaException o3)
  list<string> get_databases(1: string pattern) throws (1: MetaException o1)
  list<string> get_all_databases() throws (1: MetaException o1)
  void alter_database(1: string dbname, 2: Database db)
      throws (1: MetaException o1, 2: NoSuchObjectException o2)

  list<FieldSchema> get_fields(1: string db_name, 2: string table_name)
      throws (1: MetaException o1, 2: UnknownTableException o2, 3: UnknownDBException o3)
  list<FieldSchema> get_schema(1: string db_name, 2: string table_name)
      throws (1: MetaException o1, 2: UnknownTableException o2, 3: UnknownDBException o3)

  void create_table(1: Table tbl)
      throws (1: AlreadyExistsException o1, 2: InvalidObjectException o2, 3: MetaException o3,
              4: NoSuchObjectException o4)
  void create_table_with_environment_context(1: Table tbl, 2: EnvironmentContext environment_context)
      throws (1: AlreadyExistsException o1, 2: InvalidObjectException o2, 3: MetaException o3,
              4: NoSuchObjectException o4)
  void drop_table(1: string dbname, 2: string name, 3: bool deleteData)
      throws (1: NoSuchObjectException o1, 2: MetaException o3)
  void drop_table_with_environment_context(1: string dbname, 2: string name, 3: bool deleteData,
                                           4: EnvironmentContext environment_context)
      throws (1: NoSuchObjectException o1, 2: MetaException o3)
  list<string> get_tables(1: string db_name, 2: string pattern) throws (1: MetaException o1)
  list<string> get_tables_by_type(1: string db_name, 2: string pattern, 3: string tableType)
      throws (1: MetaException o1)
  list<TableMeta> get_table_meta(1: string db_patterns, 2: string tbl_patterns, 3: list<string> tbl_types)
      throws (1: MetaException o1)
  list<string> get_all_tables(1: string db_name) throws (1: MetaException o1)
  Table get_table(1: string dbname, 2: string tbl_name)
      throws (1: MetaException o1, 2: NoSuchObjectException o2)
  list<Table> get_table_objects_by_name(1: string dbname, 2: list<string> tbl_names)
  GetTableResult get_table_req(1: GetTableRequest req)
      throws (1: MetaException o1, 2: NoSuchObjectException o2)
  GetTablesResult get_table_objects_by_name_req(1: GetTablesRequest req)
      throws (1: MetaException o1, 2: InvalidOperationException o2, 3: UnknownDBException o3)
  void alter_table(1: string dbname, 2: string tbl_name, 3: Table new_tbl)
      throws (1: InvalidOperationException o1, 2: MetaException o2)
  void alter_table_with_environment_context(1: string dbname, 2: string tbl_name, 3: Table new_tbl,
                                            4: EnvironmentContext environment_context)
      throws (1: InvalidOperationException o1, 2: MetaException o2)
  void alter_table_with_cascade(1: string dbname, 2: string tbl_name, 3: Table new_tbl, 4: bool cascade)
      throws (1: InvalidOperationException o1, 2: MetaException o2)

  Partition add_partition(1: Partition new_part)
      throws (1: InvalidObjectException o1, 2: AlreadyExistsException o2, 3: MetaException o3)
  Partition add_partition_with_environment_context(1: Partition new_part,
                                                   2: EnvironmentContext environment_context)
      throws (1: InvalidObjectException o1, 2: AlreadyExistsException o2, 3: MetaException o3)
  i32 add_partitions(1: list<Partition> new_parts)
      throws (1: InvalidObjectException o1, 2: AlreadyExistsException o2, 3: MetaException o3)
  AddPartitionsResult add_partitions_req(1: AddPartitionsRequest request)
      throws (1: InvalidObjectException o1, 2: AlreadyExistsException o2, 3: MetaException o3)
  bool drop_partition(1: string db_name, 2: string tbl_name, 3: list<string> part_vals, 4: bool deleteData)
      throws (1: NoSuchObjectException o1, 2: MetaException o2)
  bool drop_partition_with_environment_context(1: string db_name, 2: string tbl_name,
      3: list<string> part_vals, 4: bool deleteData, 5: EnvironmentContext environment_context)
      throws (1: NoSuchObjectException o1, 2: MetaException o2)
  bool drop_partition_by_name(1: string db_name, 2: string tbl_name, 3: string part_name, 4: bool deleteData)
      throws (1: NoSuchObjectException o1, 2: MetaException o2)
  DropPartitionsResult drop_partitions_req(1: DropPartitionsRequest req)
      throws (1: NoSuchObjectException o1, 2: MetaException o2)

  Partition get_partition(1: string db_name, 2: string tbl_name, 3: list<string> part_vals)
      throws (1: MetaException o1, 2: NoSuchObjectException o2)
  Partition get_partition_with_auth(1: string db_name, 2: string tbl_name, 3: list<string> part_vals,
                                    4: string user_name, 5: list<string> group_names)
      throws (1: MetaException o1, 2: NoSuchObjectException o2)
  Partition get_partition_by_name(1: string db_name, 2: string tbl_name, 3: string part_name)
      throws (1: MetaException o1, 2: NoSuchObjectException o2)
  list<Partition> get_partitions(1: string db_name, 2: string tbl_name, 3: i16 max_parts = -1)
      throws (1: NoSuchObjectException o1, 2: MetaException o2)
  list<Partition> get_partitions_with_auth(1: string db_name, 2: string tbl_name, 3: i16 max_parts = -1,
                                           4: string user_name, 5: list<string> group_names)
      throws (1: NoSuchObjectException o1, 2: MetaException o2)
  list<string> get_partition_names(1: string db_name, 2: string tbl_name, 3: i16 max_parts = -1)
      throws (1: NoSuchObjectException o1, 2: MetaException o2)
  list<Partition> get_partitions_ps(1: string db_name, 2: string tbl_name, 3: list<string> part_vals,
                                    4: i16 max_parts = -1)
      throws (1: MetaException o1, 2: NoSuchObjectException o2)
  list<Partition> get_partitions_ps_with_auth(1: string db_name, 2: string tbl_name,
      3: list<string> part_vals, 4: i16 max_parts = -1, 5: string user_name, 6: list<string> group_names)
      throws (1: NoSuchObjectException o1, 2: MetaException o2)
  list<string> get_partition_names_ps(1: string db_name, 2: string tbl_name, 3: list<string> part_vals,
                                      4: i16 max_parts = -1)
      throws (1: MetaException o1, 2: NoSuchObjectException o2)
  list<Partition> get_partitions_by_filter(1: string db_name, 2: string tbl_name, 3: string filter,
                                           4: i16 max_parts = -1)
      throws (1: MetaException o1, 2: NoSuchObjectException o2)
  i32 get_num_partitions_by_filter(1: string db_name, 2: string tbl_name, 3: string filter)
      throws (1: MetaException o1, 2: NoSuchObjectException o2)
  list<Partition> get_partitions_by_names(1: string db_name, 2: string tbl_name, 3: list<string> names)
      throws (1: MetaException o1, 2: NoSuchObjectException o2)
  void alter_partition(1: string db_name, 2: string tbl_name, 3: Partition new_part)
      throws (1: InvalidOperationException o1, 2: MetaException o2)
  void alter_partitions(1: string db_name, 2: string tbl_name, 3: list<Partition> new_parts)
      throws (1: InvalidOperationException o1, 2: MetaException o2)
  void alter_partitions_with_environment_context(1: string db_name, 2: string tbl_name,
      3: list<Partition> new_parts, 4: EnvironmentContext environment_context)
      throws (1: InvalidOperationException o1, 2: MetaException o2)
  void alter_partition_with_environment_context(1: string db_name, 2: string tbl_name,
      3: Partition new_part, 4: EnvironmentContext environment_context)
      throws (1: InvalidOperationException o1, 2: MetaException o2)

  string get_config_value(1: string name, 2: string defaultValue)
      throws (1: ConfigValSecurityException o1)
  list<string> partition_name_to_vals(1: string part_name) throws (1: MetaException o1)
  map<string, string> partition_name_to_spec(1: string part_name) throws (1: MetaException o1)

  void create_function(1: Function func)
      throws (1: AlreadyExistsException o1, 2: InvalidObjectException o2, 3: MetaException o3,
              4: NoSuchObjectException o4)
  void drop_function(1: string dbName, 2: string funcName)
      throws (1: NoSuchObjectException o1, 2: MetaException o3)
  list<string> get_functions(1: string dbName, 2: string pattern) throws (1: MetaException o1)
  Function get_function(1: string dbName, 2: string funcName)
      throws (1: MetaException o1, 2: NoSuchObjectException o2)
  GetAllFunctionsResponse get_all_functions() throws (1: MetaException o1)

  list<string> set_ugi(1: string user_name, 2: list<string> group_names) throws (1: MetaException o1)
  CurrentNotificationEventId get_current_notificationEventId()

  // From fb303's FacebookService, which Hive's service extends: HiveMetaStoreClient.close()
  // sends it. Accepted and ignored (a client never stops the server).
  oneway void shutdown()
}
