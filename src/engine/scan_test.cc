#include <arrow/api.h>
#undef RETURN_NOT_OK

#include "engine/scan.h"

#include <unistd.h>

#include <filesystem>
#include <fstream>

#include <arrow/adapters/orc/adapter.h>
#include <arrow/io/compressed.h>
#include <arrow/io/file.h>
#include <arrow/util/compression.h>
#include <gtest/gtest.h>

#include "engine/parquet_io.h"

namespace openglue::engine {
namespace {

namespace fs = std::filesystem;

class ScanTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() /
           ("og_scan_test_" + std::to_string(getpid()) + "_" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }

  std::string Write(const std::string& name, const std::string& text) {
    fs::path p = dir_ / name;
    fs::create_directories(p.parent_path());
    std::ofstream(p, std::ios::binary) << text;
    return p.string();
  }

  std::string WriteCompressed(const std::string& name, const std::string& text,
                              arrow::Compression::type type) {
    std::string path = (dir_ / name).string();
    auto file = arrow::io::FileOutputStream::Open(path).ValueOrDie();
    auto codec = arrow::util::Codec::Create(type).ValueOrDie();
    auto out = arrow::io::CompressedOutputStream::Make(codec.get(), file).ValueOrDie();
    EXPECT_TRUE(out->Write(text.data(), text.size()).ok());
    EXPECT_TRUE(out->Close().ok());
    return path;
  }

  static std::shared_ptr<arrow::Table> ReadAll(Scan& scan,
                                               std::shared_ptr<arrow::Schema> schema = nullptr) {
    auto reader = scan.Stream(schema, 2);
    EXPECT_TRUE(reader.ok()) << reader.status().ToString();
    auto table = (*reader)->ToTable();
    EXPECT_TRUE(table.ok()) << table.status().ToString();
    EXPECT_TRUE((*table)->ValidateFull().ok());
    return *table;
  }

  static std::string Rows(const std::shared_ptr<arrow::Table>& table) {
    auto combined = table->CombineChunksToBatch().ValueOrDie();
    std::string out;
    for (int64_t r = 0; r < combined->num_rows(); ++r) {
      for (int c = 0; c < combined->num_columns(); ++c) {
        auto scalar = combined->column(c)->GetScalar(r).ValueOrDie();
        out += (c ? "," : "") + (scalar->is_valid ? scalar->ToString() : std::string("null"));
      }
      out += ";";
    }
    return out;
  }

  static std::unique_ptr<Scan> MakeScan(std::vector<std::string> files, const std::string& format,
                                        Options options = {}, storage::StorageOptions storage = {}) {
    auto scan = Scan::Make(std::move(files), format, std::move(options), std::move(storage));
    EXPECT_TRUE(scan.ok()) << scan.status().ToString();
    return std::move(scan).value();
  }

  fs::path dir_;
};

// With "openglue.badRecords" "collect", a malformed JSON record is skipped and kept, once however
// often the file is streamed: a record left open at the end of its line goes on on the next
// one (the AWS Glue developer guide's errorsAsDynamicFrame example: records 1 and 4 read, one
// bad record spanning lines 2-3), and one that closes on a later line is a good record.
TEST_F(ScanTest, JsonBadRecordsAreCollectedNotFatal) {
  auto path = Write("errors.json",
                    "{\"id\": 1, \"name\": \"george\"}\n"
                    "{\"id\": 2, \"name\": \"benjamin\",\n"
                    "{\"id\": 3, \"name\": \"alexander\"}\n"
                    "{\"id\": 4, \"name\": \"john\"}\n"
                    "{\"id\": 5,\n\"name\": \"split\"}\n"
                    "not json\n");
  auto scan = MakeScan({path}, "json", {{"openglue.badRecords", "collect"}});
  for (int pass = 0; pass < 2; ++pass) {
    auto reader = scan->Stream(nullptr, 100);
    ASSERT_TRUE(reader.ok()) << reader.status().ToString();
    auto table = (*reader)->ToTable();
    ASSERT_TRUE(table.ok()) << table.status().ToString();
    auto ids = table.ValueOrDie()->GetColumnByName("id");
    ASSERT_NE(ids, nullptr);
    EXPECT_EQ(ids->ToString(), "[\n  [\n    1,\n    4,\n    5\n  ]\n]");
  }
  std::vector<BadRecord> bad = scan->BadRecords();
  ASSERT_EQ(bad.size(), 2u);
  EXPECT_EQ(bad[0].source, path);
  EXPECT_EQ(bad[0].line, 2);
  EXPECT_EQ(bad[0].input, "{\"id\": 2, \"name\": \"benjamin\",\n{\"id\": 3, \"name\": \"alexander\"}");
  EXPECT_EQ(bad[1].line, 7);
  EXPECT_EQ(bad[1].input, "not json");
  // A file of garbage cannot make the read keep it all: past 10,000 bad records it fails.
  std::string garbage;
  for (int i = 0; i < 10001; ++i) garbage += "nope\n";
  auto flood = Write("flood.json", "{\"ok\": 1}\n" + garbage);
  auto flooded = MakeScan({flood}, "json", {{"openglue.badRecords", "collect"}})->Stream(nullptr, 100);
  ASSERT_TRUE(flooded.ok());
  auto failed = (*flooded)->ToTable();
  ASSERT_FALSE(failed.ok());
  EXPECT_NE(failed.status().message().find("more than 10000 malformed JSON records"), std::string::npos)
      << failed.status().message();
  // Without the option the read fails, naming the line.
  auto strict = MakeScan({path}, "json")->Stream(nullptr, 100);
  EXPECT_FALSE(strict.ok() && (*strict)->ToTable().ok());
}

TEST_F(ScanTest, CsvWithoutHeaderNamesColumnsCol0AndInfersTypes) {
  auto path = Write("a.csv", "1,x,2.5\n2,,3\n3000000000,y,\n");
  auto scan = MakeScan({path}, "csv");
  auto schema = scan->Schema();
  ASSERT_TRUE(schema.ok()) << schema.status().ToString();
  EXPECT_EQ((*schema)->ToString(), "col0: int64\ncol1: string\ncol2: double");
  auto raw = scan->RawSchema();
  EXPECT_EQ((*raw)->ToString(), "col0: string\ncol1: string\ncol2: string");
  EXPECT_EQ(Rows(ReadAll(*scan)), "1,x,2.5;2,null,3;3000000000,y,null;");
}

TEST_F(ScanTest, CsvMixedColumnIsAChoice) {
  auto path = Write("a.csv", "v\n1\nabc\n2\n");
  auto scan = MakeScan({path}, "csv", {{"withHeader", "true"}});
  auto schema = scan->Schema().value();
  auto type = schema->field(0)->type();
  ASSERT_EQ(type->id(), arrow::Type::DENSE_UNION);
  EXPECT_EQ(type->field(0)->name(), "int");
  EXPECT_EQ(type->field(1)->name(), "string");
  EXPECT_EQ(Rows(ReadAll(*scan)),
            "union{int: int32 = 1};union{string: string = abc};union{int: int32 = 2};");
}

// A catalog CSV table's per-value typing: TextLosses names the declared non-string columns with a
// cell their type cannot take ("ABC10005" in a bigint column; an empty cell is null, not a loss),
// and a stream given choice(long, string) for such a column keeps each cell as long or text.
TEST_F(ScanTest, CsvTextLossesAndPerValueChoices) {
  auto path = Write("a.csv", "10001,5,x\nABC10005,,y\n 7 ,6,z\n");
  auto scan = MakeScan({path}, "csv");
  auto declared = arrow::schema({arrow::field("col0", arrow::int64()),
                                 arrow::field("col1", arrow::int64())});
  auto lost = scan->TextLosses(declared);
  ASSERT_TRUE(lost.ok()) << lost.status().ToString();
  EXPECT_EQ(*lost, std::vector<std::string>{"col0"});
  auto choice = arrow::dense_union({arrow::field("long", arrow::int64()),
                                    arrow::field("string", arrow::utf8())});
  auto target = arrow::schema({arrow::field("col0", choice), arrow::field("col1", arrow::int64()),
                               arrow::field("col2", arrow::utf8())});
  EXPECT_EQ(Rows(ReadAll(*scan, target)),
            "union{long: int64 = 10001},5,x;union{string: string = ABC10005},null,y;"
            "union{long: int64 = 7},6,z;");
  // Not CSV: refused with a clear message.
  auto json = MakeScan({Write("a.json", "{}\n")}, "json");
  auto refused = json->TextLosses(declared);
  ASSERT_FALSE(refused.ok());
  EXPECT_NE(refused.status().message().find("only CSV"), std::string::npos);
}

TEST_F(ScanTest, CsvGlueOptions) {
  auto path = Write("a.csv", "junk line\nname|note\n'a|b'|x\\'y\n'multi\nline'|z\n");
  auto scan = MakeScan({path}, "csv",
                       {{"separator", "|"}, {"quoteChar", "'"}, {"escaper", "\\"},
                        {"withHeader", "false"}, {"skipFirst", "true"}, {"multiLine", "true"}});
  EXPECT_EQ(Rows(ReadAll(*scan)), "name,note;a|b,x'y;multi\nline,z;");
  auto unquoted = Write("b.csv", "\"a\",b\n");
  auto scan2 = MakeScan({unquoted}, "csv", {{"quoteChar", "-1"}});
  EXPECT_EQ(Rows(ReadAll(*scan2)), "\"a\",b;");
}

TEST_F(ScanTest, CsvFilesWithDifferentHeadersMerge) {
  auto a = Write("a.csv", "id,name\n1,x\n");
  auto b = Write("b.csv", "id,extra\n2.5,7\n");
  auto scan = MakeScan({a, b}, "csv", {{"withHeader", "true"}});
  EXPECT_EQ(scan->Schema().value()->ToString(), "id: double\nname: string\nextra: int32");
  EXPECT_EQ(Rows(ReadAll(*scan)), "1,x,null;2.5,null,7;");
}

TEST_F(ScanTest, StreamWithASchemaCastsWithoutInference) {
  auto path = Write("a.csv", "id,day,amount,gone\n1,2024-01-02,3.456,q\nx,bad,,r\n");
  auto scan = MakeScan({path}, "csv", {{"withHeader", "true"}});
  auto target = arrow::schema({arrow::field("id", arrow::int64()), arrow::field("day", arrow::date32()),
                               arrow::field("amount", arrow::decimal128(10, 2)),
                               arrow::field("missing", arrow::utf8())});
  EXPECT_EQ(Rows(ReadAll(*scan, target)), "1,2024-01-02,3.46,null;null,null,null,null;");
}

TEST_F(ScanTest, CompressedCsvAndJson) {
  std::string csv = "a,b\n1,2\n3,4\n";
  auto gz = WriteCompressed("a.csv.gz", csv, arrow::Compression::GZIP);
  auto bz = WriteCompressed("b.csv.bz2", csv, arrow::Compression::BZ2);
  auto scan = MakeScan({gz, bz}, "csv", {{"withHeader", "true"}});
  EXPECT_EQ(Rows(ReadAll(*scan)), "1,2;3,4;1,2;3,4;");
  auto plain_name = WriteCompressed("data", "{\"a\":1}\n", arrow::Compression::GZIP);
  auto json = MakeScan({plain_name}, "json", {{"compressionType", "gzip"}});
  EXPECT_EQ(Rows(ReadAll(*json)), "1;");
}

TEST_F(ScanTest, JsonLinesAndMultiLineAndJsonPath) {
  auto lines = Write("a.json", "{\"a\":1,\"b\":{\"x\":[1,2]}}\n\n{\"a\":2.5,\"c\":\"s\"}\n");
  auto scan = MakeScan({lines}, "json");
  EXPECT_EQ(scan->Schema().value()->ToString(),
            "a: double\nb: struct<x: list<item: int32>>\nc: string");
  EXPECT_EQ(Rows(ReadAll(*scan)), "1,{x:list<item: int32> = list<item: int32>[1, 2]},null;2.5,null,s;");
  auto multi = Write("b.json", "[\n {\"a\": 1},\n {\"a\": 2}\n]\n{\"a\":\n 3}\n");
  auto scan2 = MakeScan({multi}, "json", {{"multiLine", "true"}});
  EXPECT_EQ(Rows(ReadAll(*scan2)), "1;2;3;");
  auto nested = Write("c.json", "{\"items\": [{\"k\": \"x\"}, {\"k\": \"y\"}], \"n\": 1}");
  auto scan3 = MakeScan({nested}, "json", {{"jsonPath", "$.items[*]"}});
  EXPECT_EQ(Rows(ReadAll(*scan3)), "x;y;");
}

std::shared_ptr<arrow::Table> Table(const std::string& name, std::shared_ptr<arrow::Array> a) {
  return arrow::Table::Make(arrow::schema({arrow::field(name, a->type())}), {a});
}

TEST_F(ScanTest, ParquetFilesWithDifferentSchemasMergeIntoChoices) {
  arrow::Int32Builder ib;
  ASSERT_TRUE(ib.AppendValues({1, 2}).ok());
  arrow::StringBuilder sb;
  ASSERT_TRUE(sb.Append("z").ok());
  auto a = (dir_ / "a.parquet").string(), b = (dir_ / "b.parquet").string();
  ASSERT_TRUE(WriteParquet(Table("v", ib.Finish().ValueOrDie()), a).ok());
  auto t2 = arrow::Table::Make(arrow::schema({arrow::field("v", arrow::utf8()),
                                              arrow::field("w", arrow::utf8())}),
                               {sb.Finish().ValueOrDie(), arrow::MakeArrayFromScalar(arrow::StringScalar("q"), 1).ValueOrDie()});
  ASSERT_TRUE(WriteParquet(t2, b).ok());
  auto scan = MakeScan({a, b}, "parquet");
  auto schema = scan->Schema().value();
  ASSERT_EQ(schema->num_fields(), 2);
  EXPECT_EQ(schema->field(0)->type()->id(), arrow::Type::DENSE_UNION);
  EXPECT_EQ(Rows(ReadAll(*scan)),
            "union{int: int32 = 1},null;union{int: int32 = 2},null;union{string: string = z},q;");
}

TEST_F(ScanTest, OrcFile) {
  arrow::Int64Builder ib;
  ASSERT_TRUE(ib.AppendValues({7, 8}).ok());
  auto table = Table("n", ib.Finish().ValueOrDie());
  auto path = (dir_ / "a.orc").string();
  auto out = arrow::io::FileOutputStream::Open(path).ValueOrDie();
  auto writer = arrow::adapters::orc::ORCFileWriter::Open(out.get()).ValueOrDie();
  ASSERT_TRUE(writer->Write(*table).ok());
  ASSERT_TRUE(writer->Close().ok());
  ASSERT_TRUE(out->Close().ok());
  auto scan = MakeScan({path}, "orc");
  EXPECT_EQ(scan->Schema().value()->ToString(), "n: int64");
  EXPECT_EQ(Rows(ReadAll(*scan)), "7;8;");
}

// Malformed input: an error naming the file and the problem, never a crash or a hang.
TEST_F(ScanTest, MalformedInputNamesTheFile) {
  auto broken = Write("broken.csv", "a,b\n1,2\n\"unterminated,3\n4,5\n");
  auto scan = MakeScan({broken}, "csv", {{"withHeader", "true"}});
  auto schema = scan->Schema();
  ASSERT_FALSE(schema.ok());
  EXPECT_NE(schema.status().message().find(broken), std::string::npos) << schema.status().message();

  auto json = Write("bad.json", "{\"a\":1}\n{\"a\": nope}\n");
  auto scan2 = MakeScan({json}, "json");
  auto reader = scan2->Stream(arrow::schema({arrow::field("a", arrow::int32())}), 10);
  ASSERT_TRUE(reader.ok());
  auto table = (*reader)->ToTable();
  ASSERT_FALSE(table.ok());
  EXPECT_NE(table.status().message().find(json + ": invalid JSON: line 2"), std::string::npos)
      << table.status().message();

  arrow::Int32Builder ib;
  ASSERT_TRUE(ib.AppendValues(std::vector<int32_t>(1000, 5)).ok());
  auto parquet = (dir_ / "t.parquet").string();
  ASSERT_TRUE(WriteParquet(Table("v", ib.Finish().ValueOrDie()), parquet).ok());
  fs::resize_file(parquet, fs::file_size(parquet) / 2);
  auto scan3 = MakeScan({parquet}, "parquet");
  auto s3 = scan3->Schema();
  ASSERT_FALSE(s3.ok());
  EXPECT_NE(s3.status().message().find(parquet + ": not a valid Parquet file"), std::string::npos)
      << s3.status().message();

  auto missing = (dir_ / "missing.csv").string();
  auto s4 = MakeScan({missing}, "csv")->Schema();
  ASSERT_FALSE(s4.ok());
  EXPECT_EQ(s4.status().message(), missing + ": no such file");

  auto avro = Scan::Make({}, "avro", {}, {});
  ASSERT_FALSE(avro.ok());
  EXPECT_EQ(avro.status().message(), "format avro is not supported by the embedded engine");
}

TEST_F(ScanTest, S3UrisResolveUnderTheStoreRootAndNeverLeaveIt) {
  Write("store/bucket/dir/a.csv", "1\n");
  storage::StorageOptions storage;
  storage.s3_root = (dir_ / "store").string();
  auto scan = MakeScan({"s3://bucket/dir/a.csv"}, "csv", {}, storage);
  EXPECT_EQ(Rows(ReadAll(*scan)), "1;");
  auto escape = MakeScan({"s3://bucket/../bucket/dir/a.csv"}, "csv", {}, storage)->Schema();
  ASSERT_FALSE(escape.ok());
  EXPECT_NE(escape.status().message().find("s3://bucket/../bucket/dir/a.csv"), std::string::npos);
  auto listed = ListFiles({"s3://bucket/"}, {}, storage);
  ASSERT_TRUE(listed.ok()) << listed.status().ToString();
  ASSERT_EQ(listed->size(), 1u);
  EXPECT_EQ((*listed)[0].uri, "s3://bucket/dir/a.csv");
  EXPECT_EQ((*listed)[0].size, 2);
}

TEST_F(ScanTest, ListFilesSkipsHiddenHonoursRecurseAndExclusions) {
  Write("in/a.csv", "1");
  Write("in/b.json", "{}");
  Write("in/_SUCCESS", "");
  Write("in/.hidden", "");
  Write("in/_tmp/x.csv", "");
  Write("in/sub/c.csv", "1");
  std::string base = (dir_ / "in").string();
  auto all = ListFiles({base}, {}, {}).value();
  ASSERT_EQ(all.size(), 3u);
  EXPECT_EQ(all[0].uri, base + "/a.csv");
  EXPECT_EQ(all[2].uri, base + "/sub/c.csv");
  EXPECT_EQ(ListFiles({base}, {{"recurse", "false"}}, {}).value().size(), 2u);
  auto some = ListFiles({base}, {{"exclusions", "[\"**.json\", \"**/sub/**\"]"}}, {}).value();
  ASSERT_EQ(some.size(), 1u);
  EXPECT_EQ(some[0].uri, base + "/a.csv");
  EXPECT_FALSE(ListFiles({base + "/nope"}, {}, {}).ok());
  EXPECT_FALSE(ListFiles({base}, {{"exclusions", "not json"}}, {}).ok());
}

TEST(GlobTest, GlueGlobs) {
  EXPECT_TRUE(GlobMatches("s3://b/*.csv", "s3://b/a.csv"));
  EXPECT_FALSE(GlobMatches("s3://b/*.csv", "s3://b/d/a.csv"));
  EXPECT_TRUE(GlobMatches("s3://b/**.csv", "s3://b/d/a.csv"));
  EXPECT_TRUE(GlobMatches("**.{csv,json}", "s3://b/x.json"));
  EXPECT_TRUE(GlobMatches("s3://b/[a-c]?.txt", "s3://b/b1.txt"));
  EXPECT_FALSE(GlobMatches("s3://b/[!a-c]?.txt", "s3://b/b1.txt"));
  EXPECT_TRUE(GlobMatches("**.txt", "s3://b/a/b/c.txt"));
  EXPECT_TRUE(GlobMatches("s3://b/**/x.csv", "s3://b/d/e/x.csv"));
  EXPECT_TRUE(GlobMatches("s3://b/{a,b}/?.json", "s3://b/b/1.json"));
  EXPECT_FALSE(GlobMatches("s3://b/{a,b}/?.json", "s3://b/c/1.json"));
  EXPECT_TRUE(GlobMatches("s3://b/[0-9]*", "s3://b/7z"));
  EXPECT_FALSE(GlobMatches("s3://b/[!0-9]*", "s3://b/7z"));
  EXPECT_TRUE(GlobMatches("s3://b/\\*.csv", "s3://b/*.csv"));
  EXPECT_FALSE(GlobMatches("s3://b/\\*.csv", "s3://b/x.csv"));
  EXPECT_TRUE(GlobMatches("s3://b/x\\{a,b\\}", "s3://b/x{a,b}"));  // escaped: no group
  EXPECT_FALSE(GlobMatches("s3://b/x\\{a,b\\}", "s3://b/xa"));
  EXPECT_TRUE(GlobMatches("s3://b/{a\\,b,c}", "s3://b/a,b"));
  EXPECT_TRUE(GlobMatches("s3://b/{a\\,b,c}", "s3://b/c"));
  EXPECT_FALSE(GlobMatches("s3://b/{a\\,b,c}", "s3://b/b"));
  EXPECT_FALSE(GlobMatches(std::string(kMaxGlobLength + 1, '*'), "x"));
  // Polynomial on hostile patterns (a backtracking matcher takes hours on these).
  EXPECT_FALSE(GlobMatches(std::string(200, '*') + "x", std::string(5000, 'a')));
  EXPECT_FALSE(GlobMatches("*a*a*a*a*a*a*a*a*b", std::string(60, 'a')));
}

TEST_F(ScanTest, ManyBatchesStayInOrderAcrossThreads) {
  std::string text = "n\n";
  for (int i = 0; i < 20000; ++i) text += std::to_string(i) + "\n";
  auto path = Write("big.csv", text);
  auto scan = MakeScan({path}, "csv", {{"withHeader", "true"}});
  auto reader = scan->Stream(nullptr, 100).value();
  int64_t expected = 0;
  std::shared_ptr<arrow::RecordBatch> batch;
  while (true) {
    ASSERT_TRUE(reader->ReadNext(&batch).ok());
    if (!batch) break;
    auto ints = std::static_pointer_cast<arrow::Int32Array>(batch->column(0));
    for (int64_t i = 0; i < ints->length(); ++i) ASSERT_EQ(ints->Value(i), expected++);
  }
  EXPECT_EQ(expected, 20000);
}

// Several 1 MB blocks parsed on different workers: rows cut at block boundaries (quoted values
// with newlines included) come out whole and in order.
TEST_F(ScanTest, BlocksSplitOnlyBetweenRowsAndStayInOrder) {
  std::string text = "n,s\n";
  const int kRows = 120000;
  for (int i = 0; i < kRows; ++i) text += std::to_string(i) + ",\"a,\nb " + std::to_string(i) + "\"\n";
  auto path = Write("multi.csv", text);
  auto scan = MakeScan({path}, "csv", {{"withHeader", "true"}, {"multiLine", "true"}});
  ASSERT_EQ(scan->Schema().value()->ToString(), "n: int32\ns: string");
  auto reader = scan->Stream(nullptr, 1000).value();
  int64_t expected = 0, batches = 0;
  std::shared_ptr<arrow::RecordBatch> batch;
  while (true) {
    ASSERT_TRUE(reader->ReadNext(&batch).ok());
    if (!batch) break;
    ++batches;
    auto ints = std::static_pointer_cast<arrow::Int32Array>(batch->column(0));
    auto strs = std::static_pointer_cast<arrow::StringArray>(batch->column(1));
    for (int64_t i = 0; i < ints->length(); ++i) {
      ASSERT_EQ(ints->Value(i), expected);
      ASSERT_EQ(strs->GetView(i), "a,\nb " + std::to_string(expected));
      ++expected;
    }
  }
  EXPECT_EQ(expected, kRows);
  EXPECT_GT(batches, 2);
}

}  // namespace
}  // namespace openglue::engine
