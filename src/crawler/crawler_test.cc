#include <stdlib.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <optional>
#include <sstream>
#include <string>
#include <thread>

#include <gtest/gtest.h>

#include "catalog/catalog.h"
#include "common/clock.h"
#include "common/random.h"
#include "crawler/classify.h"
#include "crawler/crawl.h"
#include "crawler/crawler_service.h"
#include "crawler/grok.h"
#include "crawler/inference.h"
#include "crawler/plan.h"
#include "storage/local_object_store.h"
#include "store/sqlite_store.h"

namespace openglue::crawler {
namespace {

std::string Types(const Schema& schema) {
  std::string out;
  for (const Column& c : schema) out += (out.empty() ? "" : ",") + c.name + ":" + c.type.ToHive();
  return out;
}

// ---- inference --------------------------------------------------------------------------------

TEST(InferCsv, DetectsEachDelimiterAndTheHeader) {
  for (char d : {',', '|', '\t', ';', '\x01'}) {
    std::string s(1, d);
    std::string text = "id" + s + "name" + s + "price\n1" + s + "apple" + s + "1.5\n2" + s + "pear" + s + "2\n";
    auto r = InferCsv(text, true);
    ASSERT_TRUE(r.ok()) << r.status().ToString();
    EXPECT_EQ(r->delimiter, d);
    EXPECT_TRUE(r->header);
    EXPECT_EQ(Types(r->schema), "id:bigint,name:string,price:double");
    EXPECT_EQ(r->records, 2);
  }
}

TEST(InferCsv, AllStringColumnsMeanNoHeader) {
  auto r = InferCsv("a,b\nc,d\ne,f\n", true);
  ASSERT_TRUE(r.ok());
  EXPECT_FALSE(r->header);
  EXPECT_EQ(Types(r->schema), "col0:string,col1:string");
  EXPECT_EQ(r->records, 3);
}

TEST(InferCsv, WidensAsValuesDemand) {
  auto r = InferCsv("a,b,c\n1,1,true\n2,2.5,false\n3,x,\n", true);
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(Types(r->schema), "a:bigint,b:string,c:boolean");
}

TEST(InferCsv, QuotedFieldsAndAnIncompleteLastRecord) {
  auto r = InferCsv("k,v\n1,\"a, b\"\n2,\"say \"\"hi\"\"\"\n3,tru", false);
  ASSERT_TRUE(r.ok());
  EXPECT_TRUE(r->quoted);
  EXPECT_EQ(r->records, 2);  // the cut record is dropped
  EXPECT_EQ(Types(r->schema), "k:bigint,v:string");
}

TEST(InferCsv, RefusesBinaryAndInconsistentText) {
  EXPECT_FALSE(InferCsv(std::string("a,b\n\0\x01,2\n", 10), true).ok());
  EXPECT_FALSE(InferCsv("just one line of prose\nand another, with a comma\n", true).ok());
  EXPECT_FALSE(InferCsv("", true).ok());
}

TEST(InferJson, NestedObjectsBecomeStructsAndArrays) {
  auto r = InferJson(
      "{\"id\": 1, \"user\": {\"name\": \"a\", \"tags\": [\"x\"]}, \"score\": 2}\n"
      "{\"id\": 3000000000, \"user\": {\"name\": \"b\", \"age\": 4}, \"score\": 2.5, \"extra\": null}\n",
      true);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(Types(r->schema),
            "id:bigint,user:struct<name:string,tags:array<string>,age:int>,score:double,extra:string");
  EXPECT_EQ(r->records, 2);
}

TEST(InferJson, ArrayOfRecordsAndBadInput) {
  auto r = InferJson("[{\"a\": true}, {\"a\": false, \"b\": [1, 2]}]", true);
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(Types(r->schema), "a:boolean,b:array<int>");
  EXPECT_FALSE(InferJson("{\"a\": 1}\n{broken\n", true).ok());
  EXPECT_FALSE(InferJson("[1, 2, 3]", true).ok());
}

TEST(InferJson, PrettyPrintedAndCutSamples) {
  // Pretty-printed records one after another; a cut array keeps its complete elements.
  auto pretty = InferJson("{\n  \"a\": 1,\n  \"s\": \"}{\"\n}\n{\n  \"a\": 2\n}\n", true);
  ASSERT_TRUE(pretty.ok()) << pretty.status().ToString();
  EXPECT_EQ(Types(pretty->schema), "a:int,s:string");
  EXPECT_EQ(pretty->records, 2);
  auto cut = InferJson("[{\"a\": 1}, {\"a\": 2, \"b\": [1]}, {\"a\": 3, \"c", false);
  ASSERT_TRUE(cut.ok()) << cut.status().ToString();
  EXPECT_EQ(Types(cut->schema), "a:int,b:array<int>");
  EXPECT_EQ(cut->records, 2);
  EXPECT_FALSE(InferJson("{\"a\": 1}\n42\n", true).ok());
}

TEST(InferJsonPath, SelectsTheRecords) {
  auto r = InferJsonPath(R"({"meta": {"n": 2}, "records": [{"a": 1}, {"a": 2, "b": "x"}]})", true, "$.records[*]");
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(Types(r->schema), "a:int,b:string");
  EXPECT_EQ(r->records, 2);
  auto lines = InferJsonPath("{\"d\": {\"x\": true}}\n{\"d\": {\"x\": false}}\n", true, "$['d']");
  ASSERT_TRUE(lines.ok()) << lines.status().ToString();
  EXPECT_EQ(Types(lines->schema), "x:boolean");
  EXPECT_FALSE(InferJsonPath("{\"a\": 1}", true, "$.nothing[*]").ok());
  EXPECT_FALSE(InferJsonPath("{\"a\": 1}", true, "a.b").ok());
  EXPECT_FALSE(InferJsonPath("{\"a\": 1}", true, "$..deep").ok());
}

TEST(InferXml, RowsAttributesChildrenAndArrays) {
  auto r = InferXml(R"(<?xml version="1.0"?><orders><!-- c -->
    <order id="1"><item>apple</item><price>1.5</price><tag>a</tag><tag>b</tag></order>
    <order id="2"><item><![CDATA[pear]]></item><ship><city>Oslo</city></ship></order>
    <order id="3"/>
    <orderly>not a row</orderly>
  </orders>)", true, "order", "xml");
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->records, 2);  // the self-closing row is no record
  EXPECT_EQ(Types(r->schema), "id:bigint,item:string,price:double,tag:array<string>,ship:struct<city:string>");
  EXPECT_FALSE(InferXml("<a><b>1</b></a>", true, "row", "xml").ok());
  EXPECT_FALSE(InferXml("<row><b>1</c></row>", true, "row", "xml").ok());
  EXPECT_FALSE(InferXml("<row>", true, "row", "xml").ok());
}

TEST(Grok, FieldsTypesAndMatching) {
  auto g = GrokPattern::Make("%{TIMESTAMP_ISO8601:ts} %{LOGLEVEL:level} %{INT:code:int} %{MYWORD:who}: %{GREEDYDATA:msg}",
                             "MYWORD [a-z]+\n");
  ASSERT_TRUE(g.ok()) << g.status().ToString();
  EXPECT_EQ(Types(g->schema()), "ts:string,level:string,code:int,who:string,msg:string");
  EXPECT_TRUE(g->Matches("2024-01-02T03:04:05Z ERROR 42 app: disk full"));
  EXPECT_FALSE(g->Matches("not a log line"));
  auto r = InferGrok("2024-01-02 03:04:05 INFO 1 a: x\n2024-01-02 03:04:06 WARN 2 b: y\n", true, *g, "applog");
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->classification, "applog");
  EXPECT_EQ(r->records, 2);
  EXPECT_FALSE(InferGrok("2024-01-02 03:04:05 INFO 1 a: x\nbad line\n", true, *g, "applog").ok());
  EXPECT_FALSE(GrokPattern::Make("%{NOPE:x}", "").ok());
  EXPECT_FALSE(GrokPattern::Make("%{A:x}", "A %{A}\n").ok());  // a cycle
  EXPECT_FALSE(GrokPattern::Make("%{WORD}", "").ok());         // no field
}

TEST(Widen, Rules) {
  using K = DataType::Kind;
  bool conflict = false;
  EXPECT_EQ(Widen(DataType::Of(K::kInt), DataType::Of(K::kBigint)).ToHive(), "bigint");
  EXPECT_EQ(Widen(DataType::Of(K::kBigint), DataType::Of(K::kDouble)).ToHive(), "double");
  EXPECT_EQ(Widen(DataType::Of(K::kNull), DataType::Of(K::kBoolean)).ToHive(), "boolean");
  DataType s = DataType::Of(K::kStruct);
  s.fields.push_back(Field{"a", DataType::Of(K::kInt)});
  EXPECT_EQ(Widen(s, DataType::Of(K::kInt), &conflict).ToHive(), "string");
  EXPECT_TRUE(conflict);
}

TEST(MergeSchema, AddsNewColumnsAndReportsConflicts) {
  using K = DataType::Kind;
  Schema a = {{"id", DataType::Of(K::kInt)}, {"n", DataType::Of(K::kString)}};
  DataType arr = DataType::Of(K::kArray);
  arr.element.push_back(DataType::Of(K::kInt));
  Schema b = {{"ID", DataType::Of(K::kBigint)}, {"n", arr}, {"new", DataType::Of(K::kDouble)}};
  auto conflicts = MergeSchema(&a, b);
  EXPECT_EQ(Types(a), "id:bigint,n:string,new:double");
  ASSERT_EQ(conflicts.size(), 1u);
  EXPECT_EQ(conflicts[0], "n");
  EXPECT_DOUBLE_EQ(Similarity(a, b), 1.0);
}

// ---- table boundaries -------------------------------------------------------------------------

Leaf MakeLeaf(const std::string& folder, const std::string& classification,
              std::vector<std::string> columns) {
  Leaf leaf;
  leaf.folder = folder;
  leaf.format.classification = classification;
  leaf.format.delimiter = ',';
  for (auto& c : columns) leaf.format.schema.push_back({c, DataType::Of(DataType::Kind::kString)});
  leaf.files = 1;
  return leaf;
}

TEST(PlanTables, HiveFoldersGiveNamedKeys) {
  std::vector<Leaf> leaves = {MakeLeaf("year=2024/month=01", "csv", {"a", "b"}),
                              MakeLeaf("year=2024/month=02", "csv", {"a", "b"}),
                              MakeLeaf("year=2025/month=01", "csv", {"a", "b", "c"})};
  Plan plan = PlanTables(leaves, {});
  ASSERT_EQ(plan.tables.size(), 1u);
  EXPECT_EQ(plan.tables[0].root, "");
  EXPECT_EQ(plan.tables[0].keys, (std::vector<std::string>{"year", "month"}));
  EXPECT_EQ(plan.tables[0].values[2], (std::vector<std::string>{"2025", "01"}));
  EXPECT_EQ(Types(plan.tables[0].format.schema), "a:string,b:string,c:string");
}

TEST(PlanTables, PlainFoldersGivePartitionN) {
  Plan plan = PlanTables({MakeLeaf("2024/01", "json", {"a"}), MakeLeaf("2024/02", "json", {"a"})}, {});
  ASSERT_EQ(plan.tables.size(), 1u);
  EXPECT_EQ(plan.tables[0].keys, (std::vector<std::string>{"partition_0", "partition_1"}));
}

TEST(PlanTables, DissimilarFoldersBecomeSeparateTables) {
  std::vector<Leaf> leaves = {MakeLeaf("orders/dt=1", "csv", {"id", "amount", "customer"}),
                              MakeLeaf("orders/dt=2", "csv", {"id", "amount", "customer"}),
                              MakeLeaf("customers", "csv", {"cid", "name", "email"}),
                              MakeLeaf("events", "parquet", {"id", "amount", "customer"})};
  Plan plan = PlanTables(leaves, {});
  ASSERT_EQ(plan.tables.size(), 3u);
  EXPECT_EQ(plan.tables[0].root, "customers");
  EXPECT_TRUE(plan.tables[0].keys.empty());
  EXPECT_EQ(plan.tables[1].root, "events");
  EXPECT_EQ(plan.tables[2].root, "orders");
  EXPECT_EQ(plan.tables[2].keys, (std::vector<std::string>{"dt"}));
  // CombineCompatibleSchemas: one table for folders of one format and depth, whatever the columns.
  std::vector<Leaf> two = {MakeLeaf("a/x", "csv", {"id", "v"}), MakeLeaf("b/x", "csv", {"k", "w"})};
  EXPECT_EQ(PlanTables(two, {}).tables.size(), 2u);
  PlanOptions combine;
  combine.combine_compatible = true;
  ASSERT_EQ(PlanTables(two, combine).tables.size(), 1u);
  EXPECT_EQ(Types(PlanTables(two, combine).tables[0].format.schema), "id:string,v:string,k:string,w:string");
}

TEST(PlanTables, TableLevelPlacesTables) {
  std::vector<Leaf> leaves = {MakeLeaf("a/x", "csv", {"c"}), MakeLeaf("b/y", "csv", {"c"})};
  PlanOptions options;
  EXPECT_EQ(PlanTables(leaves, options).tables.size(), 1u);
  options.table_level = 1;
  Plan plan = PlanTables(leaves, options);
  ASSERT_EQ(plan.tables.size(), 2u);
  EXPECT_EQ(plan.tables[0].keys, (std::vector<std::string>{"partition_0"}));
}

TEST(CrawlerConfiguration, ParsesAndRefuses) {
  auto c = ParseCrawlerConfiguration(
      R"({"Version":1.0,"Grouping":{"TableGroupingPolicy":"CombineCompatibleSchemas","TableLevelConfiguration":3},)"
      R"("CrawlerOutput":{"Partitions":{"AddOrUpdateBehavior":"InheritFromTable"},)"
      R"("Tables":{"AddOrUpdateBehavior":"MergeNewColumns","TableThreshold":5}}})");
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  EXPECT_TRUE(c->combine_compatible);
  EXPECT_EQ(c->table_level, 3);
  EXPECT_TRUE(c->merge_new_columns);
  EXPECT_EQ(c->table_threshold, 5);
  EXPECT_FALSE(ParseCrawlerConfiguration("{not json").ok());
  EXPECT_FALSE(ParseCrawlerConfiguration(R"({"Grouping":{"TableGroupingPolicy":"Other"}})").ok());
}

// ---- Parquet and ORC footers ----------------------------------------------------------------------

std::string FooterCorpus(const std::string& name) {
  std::ifstream in(std::filesystem::path(__FILE__).parent_path() / "testdata" / "fuzz" / "footer" / name,
                   std::ios::binary);
  std::stringstream out;
  out << in.rdbuf();
  return out.str();
}

TEST(ClassifyObject, FootersDeclaringMoreThanTheFileAreRefusedAndGoodOnesRead) {
  char pattern[] = "/tmp/og_footer_test_XXXXXX";
  std::string dir = mkdtemp(pattern);
  auto objects = storage::LocalObjectStore::Make({dir}).value();
  ASSERT_TRUE(objects->CreateBucket("lake").ok());
  // The issue's Parquet file, 17 MiB instead of 1 GiB: PAR1, zeros, a metadata length of size-12.
  const uint32_t size = 17 << 20;
  std::string hostile = "PAR1" + std::string(size - 12, '\0');
  for (int i = 0; i < 4; ++i) hostile += static_cast<char>(((size - 12) >> (8 * i)) & 0xff);
  hostile += "PAR1";
  ASSERT_TRUE(objects->Write("lake", "t/hostile.parquet", hostile).ok());
  ASSERT_TRUE(objects->Write("lake", "t/good.parquet", FooterCorpus("tiny_none.parquet")).ok());
  ASSERT_TRUE(objects->Write("lake", "t/huge_footer.orc", FooterCorpus("orc_huge_footer.orc")).ok());
  ASSERT_TRUE(objects->Write("lake", "t/good.orc", FooterCorpus("tiny_zlib.orc")).ok());
  FooterBudget budget(kCrawlFooterBudget);
  auto classify = [&](const std::string& key) {
    return ClassifyObject(objects.get(), "lake", objects->Stat("lake", key).value(), {}, &budget);
  };
  Result<FileClass> bad = classify("t/hostile.parquet");
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("unreadable Parquet file: the Parquet footer declares 17825780 bytes of "
                                        "metadata, more than the 16777216 allowed"),
            std::string::npos)
      << bad.status().message();
  Result<FileClass> orc = classify("t/huge_footer.orc");
  ASSERT_FALSE(orc.ok());
  EXPECT_NE(orc.status().message().find("unreadable ORC file: the ORC postscript declares a footer of"),
            std::string::npos)
      << orc.status().message();
  Result<FileClass> good = classify("t/good.parquet");
  ASSERT_TRUE(good.ok()) << good.status().ToString();
  EXPECT_EQ(good->classification, "parquet");
  EXPECT_EQ(good->records, 3);
  EXPECT_EQ(Types(good->schema), "id:bigint,name:string,tags:array<bigint>");
  Result<FileClass> good_orc = classify("t/good.orc");
  ASSERT_TRUE(good_orc.ok()) << good_orc.status().ToString();
  EXPECT_EQ(Types(good_orc->schema), "id:bigint,name:string");
  EXPECT_EQ(budget.free_bytes(), kCrawlFooterBudget);  // every lease returned
  std::filesystem::remove_all(dir);
}

TEST(FooterBudget, AReservationWaitsUntilItsShareIsFree) {
  FooterBudget budget(100);
  std::optional<FooterBudget::Lease> first(budget.Reserve(70));
  EXPECT_EQ(budget.free_bytes(), 30);
  std::atomic<bool> got{false};
  std::thread waiter([&] {
    FooterBudget::Lease second = budget.Reserve(50);
    got = true;
  });
  std::this_thread::sleep_for(std::chrono::milliseconds(50));
  EXPECT_FALSE(got.load());
  first.reset();
  waiter.join();
  EXPECT_TRUE(got.load());
  EXPECT_EQ(budget.free_bytes(), 100);
  { FooterBudget::Lease all = budget.Reserve(1000); EXPECT_EQ(budget.free_bytes(), 0); }  // clamped
  EXPECT_EQ(budget.free_bytes(), 100);
}

// ---- the service over a real store, catalog and local object store -------------------------------

class CrawlerServiceTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char pattern[] = "/tmp/og_crawler_test_XXXXXX";
    dir_ = mkdtemp(pattern);
    store_ = store::SqliteStore::Make(dir_ + "/catalog.db").value();
    catalog_ = catalog::Catalog::Make(store_.get(), &clock_, {}).value();
    objects_ = storage::LocalObjectStore::Make({dir_ + "/s3"}).value();
    ASSERT_TRUE(objects_->CreateBucket("lake").ok());
    CrawlerServiceOptions options;
    options.objects = objects_.get();
    options.data_dir = dir_;
    options.log = [this](const std::string&, const std::vector<std::string>& lines) {
      for (const auto& l : lines) log_ += l + "\n";
    };
    service_ = CrawlerService::Make(store_.get(), catalog_.get(), &clock_, &random_, options).value();
    ASSERT_TRUE(catalog_->CreateDatabase({{"DatabaseInput", {{"Name", "db"}}}}).ok());
  }
  void TearDown() override {
    service_.reset();
    std::filesystem::remove_all(dir_);
  }
  void Put(const std::string& key, const std::string& data) { ASSERT_TRUE(objects_->Write("lake", key, data).ok()); }
  Json Crawl(const std::string& name) {
    std::string state;
    auto id = service_->StartCrawl(name, [&state](const std::string&, const std::string& s) { state = s; });
    EXPECT_TRUE(id.ok()) << id.status().ToString();
    service_->WaitIdle(name);
    EXPECT_FALSE(state.empty());
    return (*service_->GetCrawler({{"Name", name}}))["Crawler"];
  }
  Json Table(const std::string& name) {
    auto t = catalog_->GetTable({{"DatabaseName", "db"}, {"Name", name}});
    return t.ok() ? (*t)["Table"] : Json();
  }
  size_t Partitions(const std::string& table) {
    auto p = catalog_->GetPartitions({{"DatabaseName", "db"}, {"TableName", table}});
    return p.ok() ? (*p)["Partitions"].size() : 0;
  }

  std::string dir_;
  FakeClock clock_{1700000000000};
  SeededRandom random_{7};
  std::unique_ptr<store::SqliteStore> store_;
  std::unique_ptr<catalog::Catalog> catalog_;
  std::unique_ptr<storage::LocalObjectStore> objects_;
  std::unique_ptr<CrawlerService> service_;
  std::string log_;
};

TEST_F(CrawlerServiceTest, CrawlsHivePartitionsIntoOneTable) {
  Put("sales/dt=2024-01-01/a.csv", "id,amount\n1,2.5\n2,3\n");
  Put("sales/dt=2024-01-02/b.csv", "id,amount\n3,4\n");
  Put("sales/dt=2024-01-02/_SUCCESS", "");
  Put("sales/dt=2024-01-03/broken.csv", std::string("\0\0\0binary", 9));
  ASSERT_TRUE(service_->CreateCrawler({{"Name", "c"}, {"Role", "r"}, {"DatabaseName", "db"},
                                       {"Targets", {{"S3Targets", {{{"Path", "s3://lake/sales"}}}}}}}).ok());
  Json crawler = Crawl("c");
  EXPECT_EQ(crawler["State"], "READY");
  EXPECT_EQ(crawler["LastCrawl"]["Status"], "SUCCEEDED");
  EXPECT_NE(crawler["LastCrawl"].value("ErrorMessage", "").find("broken.csv"), std::string::npos);
  Json t = Table("sales");
  ASSERT_TRUE(t.is_object()) << log_;
  EXPECT_EQ(t["Parameters"]["classification"], "csv");
  EXPECT_EQ(t["Parameters"]["skip.header.line.count"], "1");
  EXPECT_EQ(t["StorageDescriptor"]["Location"], "s3://lake/sales/");
  EXPECT_EQ(t["PartitionKeys"][0]["Name"], "dt");
  EXPECT_EQ(t["StorageDescriptor"]["Columns"].size(), 2u);
  EXPECT_EQ(Partitions("sales"), 2u);
  EXPECT_NE(log_.find("Skipped s3://lake/sales/dt=2024-01-03/broken.csv"), std::string::npos);
}

TEST_F(CrawlerServiceTest, NewFoldersOnlyReadsOnlyNewFolders) {
  Put("t/k=1/a.json", "{\"x\": 1}\n");
  Json policy = {{"UpdateBehavior", "LOG"}, {"DeleteBehavior", "LOG"}};
  ASSERT_TRUE(service_->CreateCrawler({{"Name", "c"}, {"Role", "r"}, {"DatabaseName", "db"},
                                       {"SchemaChangePolicy", policy},
                                       {"RecrawlPolicy", {{"RecrawlBehavior", "CRAWL_NEW_FOLDERS_ONLY"}}},
                                       {"Targets", {{"S3Targets", {{{"Path", "s3://lake/t/"}}}}}}}).ok());
  Crawl("c");
  EXPECT_EQ(Partitions("t"), 1u);
  // An unreadable file in the old folder is not read again; the new folder becomes a partition.
  Put("t/k=1/b.json", std::string("\0\0", 2));
  Put("t/k=2/a.json", "{\"x\": 2}\n");
  log_.clear();
  Json crawler = Crawl("c");
  EXPECT_EQ(crawler["LastCrawl"]["Status"], "SUCCEEDED");
  EXPECT_FALSE(crawler["LastCrawl"].contains("ErrorMessage")) << crawler.dump();
  EXPECT_EQ(Partitions("t"), 2u);
  EXPECT_NE(log_.find("2 in folders crawled before"), std::string::npos) << log_;
}

TEST_F(CrawlerServiceTest, DeleteBehaviorDeletesTablesWhoseDataIsGone) {
  Put("d/one/a.csv", "a,b\n1,x\n");
  Put("d/two/a.csv", "p;q;r\nx;1;2\n");
  ASSERT_TRUE(service_->CreateCrawler({{"Name", "c"}, {"Role", "r"}, {"DatabaseName", "db"},
                                       {"TablePrefix", "raw_"},
                                       {"SchemaChangePolicy", {{"DeleteBehavior", "DELETE_FROM_DATABASE"}}},
                                       {"Targets", {{"S3Targets", {{{"Path", "s3://lake/d"}}}}}}}).ok());
  Crawl("c");
  EXPECT_TRUE(Table("raw_one").is_object());
  EXPECT_TRUE(Table("raw_two").is_object());
  ASSERT_TRUE(objects_->Delete("lake", "d/two/a.csv").ok());
  Crawl("c");
  EXPECT_TRUE(Table("raw_one").is_object());
  EXPECT_TRUE(Table("raw_two").is_null());
  auto metrics = service_->GetCrawlerMetrics({{"CrawlerNameList", {"c"}}});
  ASSERT_TRUE(metrics.ok());
  EXPECT_EQ((*metrics)["CrawlerMetricsList"][0]["TablesDeleted"], 1);
  auto crawls = service_->ListCrawls({{"CrawlerName", "c"}});
  ASSERT_TRUE(crawls.ok());
  EXPECT_EQ((*crawls)["Crawls"].size(), 2u);
  EXPECT_EQ((*crawls)["Crawls"][0]["State"], "COMPLETED");
}

TEST_F(CrawlerServiceTest, StopBeforeTheCatalogIsWrittenCancelsTheCrawl) {
  Put("s/a.csv", "a,b\n1,x\n");
  ASSERT_TRUE(service_->CreateCrawler({{"Name", "c"}, {"Role", "r"}, {"DatabaseName", "db"},
                                       {"Targets", {{"S3Targets", {{{"Path", "s3://lake/s/"}}}}}}}).ok());
  // The crawl's first progress write (after listing) waits until the test has stopped it.
  std::mutex mu;
  std::condition_variable cv;
  bool listed = false, released = false;
  service_.reset();
  CrawlerServiceOptions options;
  options.objects = objects_.get();
  options.data_dir = dir_;
  options.log = [&](const std::string&, const std::vector<std::string>& lines) {
    std::unique_lock<std::mutex> lock(mu);
    for (const auto& l : lines) log_ += l + "\n";
    listed = true;
    cv.notify_all();
    cv.wait(lock, [&] { return released; });
  };
  service_ = CrawlerService::Make(store_.get(), catalog_.get(), &clock_, &random_, options).value();
  ASSERT_TRUE(service_->StartCrawler({{"Name", "c"}}).ok());
  {
    std::unique_lock<std::mutex> lock(mu);
    cv.wait(lock, [&] { return listed; });
  }
  EXPECT_EQ((*service_->GetCrawler({{"Name", "c"}}))["Crawler"]["State"], "RUNNING");
  EXPECT_EQ(service_->StartCrawler({{"Name", "c"}}).status().code(), StatusCode::kCrawlerRunning);
  EXPECT_EQ(service_->UpdateCrawler({{"Name", "c"}, {"TablePrefix", "x"}}).status().code(),
            StatusCode::kCrawlerRunning);
  EXPECT_EQ(service_->DeleteCrawler({{"Name", "c"}}).status().code(), StatusCode::kCrawlerRunning);
  ASSERT_TRUE(service_->StopCrawler({{"Name", "c"}}).ok());
  EXPECT_EQ((*service_->GetCrawler({{"Name", "c"}}))["Crawler"]["State"], "STOPPING");
  EXPECT_EQ(service_->StopCrawler({{"Name", "c"}}).status().code(), StatusCode::kCrawlerStopping);
  {
    std::lock_guard<std::mutex> lock(mu);
    released = true;
  }
  cv.notify_all();
  service_->WaitIdle("c");
  Json crawler = (*service_->GetCrawler({{"Name", "c"}}))["Crawler"];
  EXPECT_EQ(crawler["State"], "READY");
  EXPECT_EQ(crawler["LastCrawl"]["Status"], "CANCELLED");
  EXPECT_TRUE(Table("s").is_null());
  auto crawls = service_->ListCrawls({{"CrawlerName", "c"}});
  EXPECT_EQ((*crawls)["Crawls"][0]["State"], "STOPPED");
}

TEST_F(CrawlerServiceTest, RecoverEndsCrawlsOfAnEarlierProcess) {
  Put("r/a.csv", "a,b\n1,x\n");
  ASSERT_TRUE(service_->CreateCrawler({{"Name", "c"}, {"Role", "r"}, {"DatabaseName", "db"},
                                       {"Targets", {{"S3Targets", {{{"Path", "s3://lake/r/"}}}}}}}).ok());
  // A crawler left RUNNING in the store, as by a server killed mid-crawl.
  {
    auto txn = store_->BeginWrite().value();
    Json c = ParseJson(txn->Get("crawler", "c").value().value());
    c["State"] = "RUNNING";
    c["_crawl_id"] = "old";
    c["_crawl_start_ms"] = 5;
    ASSERT_TRUE(txn->Put("crawler", "c", DumpJson(c)).ok());
    ASSERT_TRUE(txn->Commit().ok());
  }
  ASSERT_TRUE(service_->Recover().ok());
  Json crawler = (*service_->GetCrawler({{"Name", "c"}}))["Crawler"];
  EXPECT_EQ(crawler["State"], "READY");
  EXPECT_EQ(crawler["LastCrawl"]["Status"], "FAILED");
  EXPECT_EQ(Crawl("c")["LastCrawl"]["Status"], "SUCCEEDED");
}

TEST_F(CrawlerServiceTest, StatesAndErrors) {
  Json request = {{"Name", "c"}, {"Role", "r"}, {"DatabaseName", "nodb"},
                  {"Targets", {{"S3Targets", {{{"Path", "s3://lake/x"}}}}}}};
  ASSERT_TRUE(service_->CreateCrawler(request).ok());
  EXPECT_EQ(service_->CreateCrawler(request).status().code(), StatusCode::kAlreadyExists);
  EXPECT_EQ(service_->StopCrawler({{"Name", "c"}}).status().code(), StatusCode::kCrawlerNotRunning);
  EXPECT_EQ(service_->StartCrawler({{"Name", "nope"}}).status().code(), StatusCode::kEntityNotFound);
  // Every crawl's end reaches the listeners, after it is stored (the crawler is READY then).
  std::vector<std::string> heard;
  service_->AddCrawlEndListener([&](const std::string& name, const std::string& state) {
    auto got = service_->GetCrawler({{"Name", name}});
    heard.push_back(name + ":" + state + ":" + (got.ok() ? (*got)["Crawler"].value("State", "") : "?"));
  });
  Json crawler = Crawl("c");
  EXPECT_EQ(crawler["LastCrawl"]["Status"], "FAILED");
  EXPECT_EQ(crawler["LastCrawl"]["ErrorMessage"], "Database nodb not found");
  EXPECT_EQ(heard, (std::vector<std::string>{"c:FAILED:READY"}));
  Json bad = request;
  bad["Name"] = "d";
  bad["RecrawlPolicy"] = {{"RecrawlBehavior", "CRAWL_NEW_FOLDERS_ONLY"}};
  EXPECT_EQ(service_->CreateCrawler(bad).status().code(), StatusCode::kInvalidInput);
  bad["Configuration"] = "{";
  bad.erase("RecrawlPolicy");
  EXPECT_EQ(service_->CreateCrawler(bad).status().code(), StatusCode::kInvalidInput);
  EXPECT_TRUE(service_->DeleteCrawler({{"Name", "c"}}).ok());
  EXPECT_EQ(service_->GetCrawler({{"Name", "c"}}).status().code(), StatusCode::kEntityNotFound);
}

}  // namespace
}  // namespace openglue::crawler
