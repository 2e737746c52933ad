// The handler over a real catalog (SQLite store in a temporary folder), called as the Thrift
// processor calls it: no sockets or threads here (tests/test_hms.py drives the real server).
#include "hms/metastore_handler.h"

#include <gtest/gtest.h>
#include <stdlib.h>

#include <filesystem>

#include "common/clock.h"
#include "store/sqlite_store.h"

namespace openglue::hms {
namespace {

class MetastoreHandlerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char pattern[] = "/tmp/og-hms-XXXXXX";
    dir_ = mkdtemp(pattern);
    auto store = store::SqliteStore::Make(dir_ + "/catalog.db");
    ASSERT_TRUE(store.ok());
    store_ = std::move(*store);
    auto catalog = catalog::Catalog::Make(store_.get(), &clock_, catalog::CatalogOptions{});
    ASSERT_TRUE(catalog.ok());
    catalog_ = std::move(*catalog);
    HmsOptions options;
    options.default_location_root = "file:/warehouse";
    handler_ = std::make_unique<MetastoreHandler>(catalog_.get(), options);
    wire::Database db;
    db.__set_name("Shop");
    handler_->create_database(db);
  }
  void TearDown() override {
    handler_.reset();
    catalog_.reset();
    store_.reset();
    std::filesystem::remove_all(dir_);
  }

  static wire::Table HiveTable(const std::string& name) {
    wire::Table t;
    t.__set_tableName(name);
    t.__set_dbName("shop");
    t.__set_tableType("MANAGED_TABLE");
    wire::FieldSchema id;
    id.__set_name("id");
    id.__set_type("bigint");
    wire::FieldSchema part;
    part.__set_name("part");
    part.__set_type("string");
    wire::FieldSchema year;
    year.__set_name("year");
    year.__set_type("int");
    wire::StorageDescriptor sd;
    sd.__set_cols({id});
    sd.__set_location("file:/warehouse/shop.db/" + name);
    sd.__set_inputFormat("org.apache.hadoop.hive.ql.io.parquet.MapredParquetInputFormat");
    wire::SerDeInfo serde;
    serde.__set_serializationLib("org.apache.hadoop.hive.ql.io.parquet.serde.ParquetHiveSerDe");
    sd.__set_serdeInfo(serde);
    t.__set_sd(sd);
    t.__set_partitionKeys({part, year});
    t.__set_parameters({{"spark.sql.sources.provider", "parquet"}});
    return t;
  }
  static wire::Partition HivePartition(const std::string& part, const std::string& year) {
    wire::Partition p;
    p.__set_dbName("shop");
    p.__set_tableName("t");
    p.__set_values({part, year});
    wire::StorageDescriptor sd;
    sd.__set_location("file:/warehouse/shop.db/t/part=" + part + "/year=" + year);
    p.__set_sd(sd);
    return p;
  }

  FakeClock clock_{1700000000000};
  std::string dir_;
  std::unique_ptr<store::SqliteStore> store_;
  std::unique_ptr<catalog::Catalog> catalog_;
  std::unique_ptr<MetastoreHandler> handler_;
};

TEST_F(MetastoreHandlerTest, DatabasesAndTheirErrors) {
  wire::Database db;
  handler_->get_database(db, "SHOP");
  EXPECT_EQ(db.name, "shop");
  EXPECT_EQ(db.locationUri, "file:/warehouse/shop.db");
  EXPECT_THROW(handler_->get_database(db, "nope"), wire::NoSuchObjectException);
  wire::Database again;
  again.__set_name("shop");
  EXPECT_THROW(handler_->create_database(again), wire::AlreadyExistsException);
  std::vector<std::string> names;
  handler_->get_databases(names, "sh*|other");
  EXPECT_EQ(names, std::vector<std::string>{"shop"});
  handler_->get_all_databases(names);
  EXPECT_EQ(names, std::vector<std::string>{"shop"});
  EXPECT_THROW(handler_->drop_database("default", false, false), wire::MetaException);
}

TEST_F(MetastoreHandlerTest, TablesRoundTripAndMissingOnesAreNoSuchObject) {
  handler_->create_table(HiveTable("T"));
  EXPECT_THROW(handler_->create_table(HiveTable("t")), wire::AlreadyExistsException);
  wire::Table t;
  handler_->get_table(t, "shop", "t");
  EXPECT_EQ(t.tableName, "t");
  EXPECT_EQ(t.tableType, "MANAGED_TABLE");
  EXPECT_EQ(t.partitionKeys.size(), 2u);
  EXPECT_EQ(t.parameters.at("spark.sql.sources.provider"), "parquet");
  EXPECT_EQ(t.sd.serdeInfo.serializationLib, "org.apache.hadoop.hive.ql.io.parquet.serde.ParquetHiveSerDe");
  EXPECT_EQ(t.createTime, 1700000000);
  EXPECT_THROW(handler_->get_table(t, "shop", "missing"), wire::NoSuchObjectException);
  EXPECT_THROW(handler_->get_table(t, "nodb", "t"), wire::NoSuchObjectException);
  wire::Table bad = HiveTable("x");
  bad.__set_dbName("nodb");
  EXPECT_THROW(handler_->create_table(bad), wire::NoSuchObjectException);
  // Without a location a table goes in its database's folder, as Hive's metastore places it.
  wire::Table unplaced = HiveTable("Unplaced");
  unplaced.sd.__isset.location = false;
  handler_->create_table(unplaced);
  wire::Table placed;
  handler_->get_table(placed, "shop", "unplaced");
  EXPECT_EQ(placed.sd.location, "file:/warehouse/shop.db/unplaced");
  handler_->drop_table("shop", "unplaced", false);

  std::vector<std::string> names;
  handler_->get_tables(names, "shop", "*");
  EXPECT_EQ(names, std::vector<std::string>{"t"});
  handler_->get_tables(names, "nodb", "*");
  EXPECT_TRUE(names.empty());
  std::vector<wire::Table> tables;
  handler_->get_table_objects_by_name(tables, "shop", {"t", "missing"});
  ASSERT_EQ(tables.size(), 1u);

  // Alter keeps the name; a rename is refused with Hive's InvalidOperationException.
  t.parameters["k"] = "v";
  handler_->alter_table("shop", "t", t);
  wire::Table altered;
  handler_->get_table(altered, "shop", "t");
  EXPECT_EQ(altered.parameters.at("k"), "v");
  t.__set_tableName("renamed");
  EXPECT_THROW(handler_->alter_table("shop", "t", t), wire::InvalidOperationException);

  EXPECT_THROW(handler_->drop_database("shop", false, false), wire::InvalidOperationException);
  handler_->drop_table("shop", "t", true);
  EXPECT_THROW(handler_->drop_table("shop", "t", true), wire::NoSuchObjectException);
  handler_->drop_database("shop", false, false);
  wire::Database db;
  EXPECT_THROW(handler_->get_database(db, "shop"), wire::NoSuchObjectException);
}

TEST_F(MetastoreHandlerTest, PartitionsByFilterNamesAndSpec) {
  handler_->create_table(HiveTable("t"));
  EXPECT_EQ(handler_->add_partitions({HivePartition("a", "2020"), HivePartition("b", "2021"),
                                      HivePartition("b", "2024")}),
            3);
  EXPECT_THROW(handler_->add_partitions({HivePartition("a", "2020")}), wire::AlreadyExistsException);
  wire::AddPartitionsRequest req;
  req.__set_dbName("shop");
  req.__set_tblName("t");
  req.__set_parts({HivePartition("a", "2020"), HivePartition("c", "2022")});
  req.__set_ifNotExists(true);
  wire::AddPartitionsResult added;
  handler_->add_partitions_req(added, req);

  std::vector<wire::Partition> parts;
  handler_->get_partitions_by_filter(parts, "shop", "t", R"(part = "b")", -1);
  ASSERT_EQ(parts.size(), 2u);
  for (const auto& p : parts) EXPECT_EQ(p.values[0], "b");
  handler_->get_partitions_by_filter(parts, "shop", "t", R"((part = "b" and year > 2022))", -1);
  ASSERT_EQ(parts.size(), 1u);
  EXPECT_EQ(parts[0].sd.location, "file:/warehouse/shop.db/t/part=b/year=2024");
  EXPECT_THROW(handler_->get_partitions_by_filter(parts, "shop", "t", R"(nokey = "b")", -1), wire::MetaException);
  EXPECT_THROW(handler_->get_partitions_by_filter(parts, "shop", "missing", "", -1), wire::NoSuchObjectException);
  EXPECT_EQ(handler_->get_num_partitions_by_filter("shop", "t", "year >= 2021"), 3);

  std::vector<std::string> names;
  handler_->get_partition_names(names, "shop", "t", -1);
  EXPECT_EQ(names.size(), 4u);
  EXPECT_NE(std::find(names.begin(), names.end(), "part=c/year=2022"), names.end());
  handler_->get_partition_names(names, "shop", "t", 2);
  EXPECT_EQ(names.size(), 2u);
  handler_->get_partitions_ps(parts, "shop", "t", {"b"}, -1);
  EXPECT_EQ(parts.size(), 2u);
  handler_->get_partitions_by_names(parts, "shop", "t", {"part=a/year=2020", "part=z/year=1"});
  ASSERT_EQ(parts.size(), 1u);
  EXPECT_EQ(parts[0].values, (std::vector<std::string>{"a", "2020"}));

  wire::Partition p;
  handler_->get_partition_by_name(p, "shop", "t", "part=c/year=2022");
  p.parameters["numRows"] = "7";
  handler_->alter_partition("shop", "t", p);
  handler_->get_partition(p, "shop", "t", {"c", "2022"});
  EXPECT_EQ(p.parameters.at("numRows"), "7");

  EXPECT_TRUE(handler_->drop_partition("shop", "t", {"c", "2022"}, false));
  EXPECT_THROW(handler_->drop_partition("shop", "t", {"c", "2022"}, false), wire::NoSuchObjectException);
  EXPECT_THROW(handler_->get_partition(p, "shop", "t", {"c", "2022"}), wire::NoSuchObjectException);

  std::vector<std::string> vals;
  handler_->partition_name_to_vals(vals, "part=a%2Fb/year=1");
  EXPECT_EQ(vals, (std::vector<std::string>{"a/b", "1"}));
}

TEST_F(MetastoreHandlerTest, FunctionsComeFromTheCatalog) {
  wire::GetAllFunctionsResponse all;
  handler_->get_all_functions(all);
  EXPECT_TRUE(all.functions.empty());
  wire::Function f;
  f.__set_functionName("MyUpper");
  f.__set_dbName("shop");
  f.__set_className("com.example.Upper");
  f.__set_ownerType(wire::PrincipalType::USER);
  f.__set_functionType(wire::FunctionType::JAVA);
  handler_->create_function(f);
  handler_->get_all_functions(all);
  ASSERT_EQ(all.functions.size(), 1u);
  EXPECT_EQ(all.functions[0].functionName, "myupper");
  std::vector<std::string> names;
  handler_->get_functions(names, "shop", "my*");
  EXPECT_EQ(names, std::vector<std::string>{"myupper"});
  wire::Function got;
  EXPECT_THROW(handler_->get_function(got, "shop", "nope"), wire::NoSuchObjectException);
}

}  // namespace
}  // namespace openglue::hms
