#include "hms/translate.h"

#include <gtest/gtest.h>

#include <vector>

#include "catalog/partition_filter.h"

namespace openglue::hms {
namespace {

// The filter strings Spark 3.5's Hive shim sends (HiveShim.convertFilters), and what they become.
TEST(HiveFilterToExpression, RewritesHiveStringsAsGlueLiterals) {
  struct Case {
    const char* hive;
    const char* glue;
  } cases[] = {
      {R"(part = "x")", "part = 'x'"},
      {R"((year > 2020 and part = "a"))", "(year > 2020 and part = 'a')"},
      {R"((part = "a" or part = "b"))", "(part = 'a' or part = 'b')"},
      {R"(part = 'it"s')", R"(part = 'it"s')"},
      {R"(part = "it's")", "part = 'it''s'"},
      {R"(part != "x")", "part != 'x'"},
      {R"(part like "a%")", "part like 'a%'"},
      {R"(part = "a\"b")", R"(part = 'a\"b')"},
      {"year >= 1 and year <= 9", "year >= 1 and year <= 9"},
  };
  for (const auto& c : cases) {
    auto out = HiveFilterToExpression(c.hive);
    ASSERT_TRUE(out.ok()) << c.hive << ": " << out.status().ToString();
    EXPECT_EQ(*out, c.glue) << c.hive;
  }
}

TEST(HiveFilterToExpression, RefusesUnterminatedAndEmpty) {
  EXPECT_EQ(HiveFilterToExpression(R"(part = "x)").status().code(), StatusCode::kInvalidInput);
  EXPECT_EQ(HiveFilterToExpression("part = 'x").status().code(), StatusCode::kInvalidInput);
  EXPECT_EQ(HiveFilterToExpression("part = \"x\\").status().code(), StatusCode::kInvalidInput);
  EXPECT_EQ(HiveFilterToExpression("   ").status().code(), StatusCode::kInvalidInput);
}

// The translated filter is the catalog's own Expression: it selects what Hive's would.
TEST(HiveFilterToExpression, TranslatedFilterSelectsTheMatchingPartitions) {
  std::vector<catalog::PartitionKey> keys{{"part", "string"}, {"year", "int"}};
  auto expression = HiveFilterToExpression(R"((part = "b" and year > 2020))");
  ASSERT_TRUE(expression.ok());
  auto filter = catalog::PartitionFilter::Make(*expression, keys);
  ASSERT_TRUE(filter.ok()) << filter.status().ToString();
  EXPECT_TRUE((*filter)->Matches({"b", "2024"}));
  EXPECT_FALSE((*filter)->Matches({"a", "2024"}));
  EXPECT_FALSE((*filter)->Matches({"b", "2019"}));
  // Index planning sees the equality as the catalog's own expressions do.
  auto required = (*filter)->RequiredEqualities();
  ASSERT_EQ(required.count(0), 1u);
  EXPECT_EQ(required[0], std::vector<std::string>{"b"});
}

TEST(PartialSpecExpression, ConstrainsOnlyGivenValues) {
  std::vector<std::string> keys{"a", "b`c"};
  EXPECT_EQ(PartialSpecExpression(keys, {}), "");
  EXPECT_EQ(PartialSpecExpression(keys, {"", "x"}), "`b``c` = 'x'");
  EXPECT_EQ(PartialSpecExpression(keys, {"it's", ""}), "`a` = 'it''s'");
  auto filter = catalog::PartitionFilter::Make(PartialSpecExpression({"a", "b"}, {"1", "x"}),
                                               {{"a", "string"}, {"b", "string"}});
  ASSERT_TRUE(filter.ok()) << filter.status().ToString();
  EXPECT_TRUE((*filter)->Matches({"1", "x"}));
  EXPECT_FALSE((*filter)->Matches({"1", "y"}));
}

TEST(PartitionName, EscapesLikeHiveAndRoundTrips) {
  std::vector<std::string> keys{"dt", "country"};
  std::string name = PartitionName(keys, {"2024-01-01 10:00", "a/b=c%"});
  EXPECT_EQ(name, "dt=2024-01-01 10%3A00/country=a%2Fb%3Dc%25");
  auto values = PartitionValuesFromName(name, keys);
  ASSERT_TRUE(values.ok());
  EXPECT_EQ(*values, (std::vector<std::string>{"2024-01-01 10:00", "a/b=c%"}));
  EXPECT_EQ(PartitionName({"p"}, {""}), "p=__HIVE_DEFAULT_PARTITION__");
  EXPECT_EQ(PartitionValuesFromName("dt=1", keys).status().code(), StatusCode::kInvalidInput);
  EXPECT_EQ(PartitionValuesFromName("dt=1/x=2", keys).status().code(), StatusCode::kInvalidInput);
  EXPECT_EQ(PartitionValuesFromName("dt", keys).status().code(), StatusCode::kInvalidInput);
  EXPECT_EQ(UnescapePathName("a%2"), "a%2");  // a cut escape stays as it is
}

Json GlueTable() {
  return Json::parse(R"({
    "Name": "sales", "DatabaseName": "shop", "Owner": "ana", "CreateTime": 1700000000.5,
    "Description": "daily sales", "Retention": 0, "TableType": "EXTERNAL_TABLE",
    "Parameters": {"classification": "csv"},
    "PartitionKeys": [{"Name": "dt", "Type": "string"}],
    "StorageDescriptor": {
      "Columns": [{"Name": "id", "Type": "bigint", "Comment": "the id"}, {"Name": "amount", "Type": "double"}],
      "Location": "file:///data/sales", "InputFormat": "org.apache.hadoop.mapred.TextInputFormat",
      "OutputFormat": "org.apache.hadoop.hive.ql.io.HiveIgnoreKeyTextOutputFormat",
      "Compressed": false, "NumberOfBuckets": -1,
      "SerdeInfo": {"SerializationLibrary": "org.apache.hadoop.hive.serde2.lazy.LazySimpleSerDe",
                    "Parameters": {"field.delim": ","}},
      "BucketColumns": [], "SortColumns": [{"Column": "id", "SortOrder": 1}], "Parameters": {}}
  })");
}

TEST(TableTranslation, GlueTableToHiveKeepsEveryMember) {
  wire::Table t = TableToHive(GlueTable());
  EXPECT_EQ(t.tableName, "sales");
  EXPECT_EQ(t.dbName, "shop");
  EXPECT_EQ(t.owner, "ana");
  EXPECT_EQ(t.createTime, 1700000000);
  EXPECT_EQ(t.tableType, "EXTERNAL_TABLE");
  EXPECT_EQ(t.parameters.at("classification"), "csv");
  EXPECT_EQ(t.parameters.at("comment"), "daily sales");
  ASSERT_EQ(t.partitionKeys.size(), 1u);
  EXPECT_EQ(t.partitionKeys[0].name, "dt");
  ASSERT_EQ(t.sd.cols.size(), 2u);
  EXPECT_EQ(t.sd.cols[0].comment, "the id");
  EXPECT_FALSE(t.sd.cols[1].__isset.comment);
  EXPECT_EQ(t.sd.location, "file:///data/sales");
  EXPECT_EQ(t.sd.serdeInfo.serializationLib, "org.apache.hadoop.hive.serde2.lazy.LazySimpleSerDe");
  EXPECT_EQ(t.sd.serdeInfo.parameters.at("field.delim"), ",");
  EXPECT_EQ(t.sd.numBuckets, -1);
  ASSERT_EQ(t.sd.sortCols.size(), 1u);
  EXPECT_EQ(t.sd.sortCols[0].col, "id");
  // Absent members stay unset (null on the wire), not empty strings.
  EXPECT_FALSE(t.__isset.viewOriginalText);
}

TEST(TableTranslation, RoundTripThroughHiveGivesTheSameTableInput) {
  Json input = TableInputFromHive(TableToHive(GlueTable()));
  EXPECT_EQ(input["Name"], "sales");
  EXPECT_EQ(input["Owner"], "ana");
  EXPECT_EQ(input["Description"], "daily sales");
  EXPECT_EQ(input["TableType"], "EXTERNAL_TABLE");
  EXPECT_EQ(input["PartitionKeys"], GlueTable()["PartitionKeys"]);
  const Json& sd = input["StorageDescriptor"];
  EXPECT_EQ(sd["Columns"], GlueTable()["StorageDescriptor"]["Columns"]);
  EXPECT_EQ(sd["Location"], "file:///data/sales");
  EXPECT_EQ(sd["SerdeInfo"]["Parameters"]["field.delim"], ",");
  EXPECT_EQ(sd["SortColumns"], GlueTable()["StorageDescriptor"]["SortColumns"]);
  EXPECT_FALSE(input.contains("ViewOriginalText"));
}

TEST(TableTranslation, MissingTypeReadsAsExternalAndNamesFoldToLowercase) {
  Json glue = GlueTable();
  glue.erase("TableType");
  EXPECT_EQ(TableToHive(glue).tableType, "EXTERNAL_TABLE");
  wire::Table hive = TableToHive(GlueTable());
  hive.__set_tableName("Sales");
  hive.sd.cols[0].__set_name("ID");
  hive.sd.cols[0].__set_comment(std::string(300, 'c'));  // Glue allows 255 bytes
  Json input = TableInputFromHive(hive);
  EXPECT_EQ(input["Name"], "sales");
  EXPECT_EQ(input["StorageDescriptor"]["Columns"][0]["Name"], "id");
  EXPECT_EQ(input["StorageDescriptor"]["Columns"][0]["Comment"].get<std::string>().size(), 255u);
}

TEST(PartitionTranslation, PartitionWithoutStorageGetsTheTablesInItsFolder) {
  Json table = GlueTable();
  Json partition{{"Values", {"2024-01-01"}}, {"DatabaseName", "shop"}, {"TableName", "sales"},
                 {"CreationTime", 1700000001}};
  wire::Partition p = PartitionToHive(partition, table);
  EXPECT_EQ(p.values, std::vector<std::string>{"2024-01-01"});
  EXPECT_EQ(p.createTime, 1700000001);
  EXPECT_EQ(p.sd.location, "file:///data/sales/dt=2024-01-01");
  EXPECT_EQ(p.sd.inputFormat, "org.apache.hadoop.mapred.TextInputFormat");
  partition["StorageDescriptor"] = {{"Location", "s3://b/x"}, {"Columns", Json::array()}};
  EXPECT_EQ(PartitionToHive(partition, table).sd.location, "s3://b/x");
  Json input = PartitionInputFromHive(PartitionToHive(partition, table));
  EXPECT_EQ(input["Values"], Json::array({"2024-01-01"}));
  EXPECT_EQ(input["StorageDescriptor"]["Location"], "s3://b/x");
}

TEST(DatabaseTranslation, LocationDefaultsUnderTheRoot) {
  wire::Database db = DatabaseToHive(Json{{"Name", "shop"}, {"Parameters", {{"k", "v"}}}}, "file:/w");
  EXPECT_EQ(db.locationUri, "file:/w/shop.db");
  EXPECT_EQ(db.parameters.at("k"), "v");
  db.__set_name("Shop");
  db.__set_description("d");
  Json input = DatabaseInputFromHive(db);
  EXPECT_EQ(input["Name"], "shop");
  EXPECT_EQ(input["LocationUri"], "file:/w/shop.db");
  EXPECT_EQ(input["Description"], "d");
}

TEST(FunctionTranslation, ResourceUrisAndOwnerMap) {
  Json glue{{"FunctionName", "f"}, {"DatabaseName", "shop"}, {"ClassName", "com.x.F"},
            {"OwnerName", "ana"}, {"OwnerType", "ROLE"}, {"CreateTime", 5},
            {"ResourceUris", {{{"ResourceType", "FILE"}, {"Uri", "s3://b/f.jar"}}}}};
  wire::Function f = FunctionToHive(glue);
  EXPECT_EQ(f.className, "com.x.F");
  EXPECT_EQ(f.ownerType, wire::PrincipalType::ROLE);
  ASSERT_EQ(f.resourceUris.size(), 1u);
  EXPECT_EQ(f.resourceUris[0].resourceType, wire::ResourceType::FILE);
  Json input = FunctionInputFromHive(f);
  EXPECT_EQ(input["ResourceUris"], glue["ResourceUris"]);
  EXPECT_EQ(input["OwnerType"], "ROLE");
}

TEST(HiveTime, ClampsAndIgnoresNonNumbers) {
  EXPECT_EQ(HiveTime(Json(1.9)), 1);
  EXPECT_EQ(HiveTime(Json("x")), 0);
  EXPECT_EQ(HiveTime(Json(-5)), 0);
  EXPECT_EQ(HiveTime(Json(1e30)), 2147483647);
}

}  // namespace
}  // namespace openglue::hms
