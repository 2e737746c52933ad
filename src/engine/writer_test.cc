#include <arrow/adapters/orc/adapter.h>
#include <arrow/api.h>
#include <arrow/csv/api.h>
#include <arrow/io/api.h>
#include <arrow/json/from_string.h>
#include <parquet/arrow/reader.h>
#undef RETURN_NOT_OK

#include "engine/writer.h"

#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <regex>
#include <set>

#include <gtest/gtest.h>

#include "engine/glue_cast.h"

namespace openglue::engine {
namespace {

namespace fs = std::filesystem;
using ArrayPtr = std::shared_ptr<arrow::Array>;

ArrayPtr A(const std::shared_ptr<arrow::DataType>& type, const std::string& json) {
  auto r = arrow::json::ArrayFromJSONString(type, json);
  EXPECT_TRUE(r.ok()) << r.status().ToString();
  return *r;
}

std::shared_ptr<arrow::RecordBatch> Batch(const std::vector<std::pair<std::string, ArrayPtr>>& columns) {
  std::vector<std::shared_ptr<arrow::Field>> fields;
  std::vector<ArrayPtr> arrays;
  for (const auto& [name, array] : columns) {
    fields.push_back(arrow::field(name, array->type()));
    arrays.push_back(array);
  }
  return arrow::RecordBatch::Make(arrow::schema(fields), arrays.empty() ? 0 : arrays[0]->length(), arrays);
}

std::shared_ptr<arrow::RecordBatchReader> Reader(std::vector<std::shared_ptr<arrow::RecordBatch>> batches) {
  auto schema = batches[0]->schema();
  return *arrow::RecordBatchReader::Make(std::move(batches), schema);
}

// Yields `good` batches, then fails (checking on the way that no finished file is visible).
class FailingReader : public arrow::RecordBatchReader {
 public:
  FailingReader(std::shared_ptr<arrow::RecordBatch> batch, int good, std::string dir)
      : batch_(std::move(batch)), good_(good), dir_(std::move(dir)) {}
  std::shared_ptr<arrow::Schema> schema() const override { return batch_->schema(); }
  arrow::Status ReadNext(std::shared_ptr<arrow::RecordBatch>* out) override {
    if (fs::exists(dir_)) {
      for (const auto& entry : fs::recursive_directory_iterator(dir_)) {
        std::string name = entry.path().filename().string();
        if (entry.is_regular_file()) {
          if (name.rfind(".og-tmp.part-", 0) == 0) ++temps_seen;
          else ++visible_files;
        }
      }
    }
    if (calls_++ < good_) { *out = batch_; return arrow::Status::OK(); }
    return arrow::Status::IOError("broken input");
  }
  int temps_seen = 0;
  int visible_files = 0;

 private:
  std::shared_ptr<arrow::RecordBatch> batch_;
  int good_;
  std::string dir_;
  int calls_ = 0;
};

class WriterTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char pattern[] = "/tmp/og-writer-XXXXXX";
    ASSERT_NE(mkdtemp(pattern), nullptr);
    dir_ = pattern;
  }
  void TearDown() override {
    fs::permissions(dir_, fs::perms::owner_all, fs::perm_options::add);
    fs::remove_all(dir_);
  }
  std::vector<std::string> Files(const std::string& under) {
    std::vector<std::string> out;
    for (const auto& entry : fs::recursive_directory_iterator(under))
      if (entry.is_regular_file()) out.push_back(fs::relative(entry.path(), under).string());
    std::sort(out.begin(), out.end());
    return out;
  }
  std::shared_ptr<arrow::Table> ReadParquet(const std::string& path) {
    auto file = arrow::io::ReadableFile::Open(path);
    EXPECT_TRUE(file.ok());
    auto reader = parquet::arrow::OpenFile(*file, arrow::default_memory_pool());
    EXPECT_TRUE(reader.ok()) << reader.status().ToString();
    auto table = (*reader)->ReadTable();
    EXPECT_TRUE(table.ok());
    return *table;
  }
  std::string Slurp(const std::string& path) {
    std::ifstream in(path);
    return std::string(std::istreambuf_iterator<char>(in), {});
  }
  std::string dir_;
  SeededRandom random_{42};
};

std::shared_ptr<arrow::RecordBatch> Sales() {
  return Batch({{"id", A(arrow::int64(), "[1, 2, 3, 4, 5, 6]")},
                {"day", A(arrow::date32(), "[19782, 19783, 19782, null, 19783, 19782]")},
                {"name", A(arrow::utf8(), R"(["a", "b", "c", "d", "e", "f"])")},
                {"amount", A(arrow::decimal128(10, 2), R"(["1.50", "2.00", "3.25", "4.00", null, "6.10"])")}});
}

TEST_F(WriterTest, ParquetPartitionedByDateReadsBackPerPartition) {
  auto uris = Write(Reader({Sales()}), dir_ + "/out", "parquet", {}, {"day"}, {}, &random_);
  ASSERT_TRUE(uris.ok()) << uris.status().ToString();
  ASSERT_EQ(uris->size(), 3u);
  std::set<std::string> folders;
  std::regex name(R"(part-\d{5}-[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}\.snappy\.parquet)");
  for (const auto& uri : *uris) {
    fs::path p(uri);
    EXPECT_TRUE(std::regex_match(p.filename().string(), name)) << uri;
    folders.insert(p.parent_path().filename().string());
  }
  EXPECT_EQ(folders, (std::set<std::string>{"day=2024-02-29", "day=2024-03-01", "day=__HIVE_DEFAULT_PARTITION__"}));
  std::map<std::string, std::shared_ptr<arrow::Table>> by_folder;
  for (const auto& uri : *uris) by_folder[fs::path(uri).parent_path().filename().string()] = ReadParquet(uri);
  auto t = by_folder["day=2024-02-29"];
  ASSERT_EQ(t->num_columns(), 3);  // the key is not repeated inside
  EXPECT_EQ(t->schema()->field(0)->name(), "id");
  EXPECT_TRUE(t->column(0)->chunk(0)->Equals(*A(arrow::int64(), "[1, 3, 6]")));
  EXPECT_TRUE(t->column(2)->chunk(0)->Equals(*A(arrow::decimal128(10, 2), R"(["1.50", "3.25", "6.10"])")));
  EXPECT_TRUE(by_folder["day=__HIVE_DEFAULT_PARTITION__"]->column(1)->chunk(0)->Equals(*A(arrow::utf8(), R"(["d"])")));
  for (const auto& f : Files(dir_ + "/out")) EXPECT_EQ(f.find(".og-tmp."), std::string::npos) << f;
}

TEST_F(WriterTest, PartitionValuesAreEscapedAsHiveDoes) {
  EXPECT_EQ(EscapePartitionValue("a/b:c=d%e f#?"), "a%2Fb%3Ac%3Dd%25e f%23%3F");
  EXPECT_EQ(EscapePartitionValue(".."), "..");
  auto batch = Batch({{"k", A(arrow::utf8(), R"(["a/b", "..", "", null, "2024-01-01 10:00:00"])")},
                      {"v", A(arrow::int32(), "[1, 2, 3, 4, 5]")}});
  auto uris = Write(Reader({batch}), dir_ + "/esc", "csv", {}, {"k"}, {}, &random_);
  ASSERT_TRUE(uris.ok()) << uris.status().ToString();
  std::set<std::string> folders;
  for (const auto& f : Files(dir_ + "/esc")) folders.insert(fs::path(f).parent_path().string());
  EXPECT_EQ(folders, (std::set<std::string>{"k=a%2Fb", "k=..", "k=__HIVE_DEFAULT_PARTITION__", "k=2024-01-01 10%3A00%3A00"}));
  EXPECT_EQ(Files(dir_ + "/esc").size(), 4u);  // "" and null share the default partition
}

TEST_F(WriterTest, CompressionCodecsNameAndEncodeTheFiles) {
  for (const auto& [codec, infix] : std::vector<std::pair<std::string, std::string>>{
           {"snappy", ".snappy.parquet"}, {"gzip", ".gz.parquet"}, {"zstd", ".zstd.parquet"},
           {"lz4", ".lz4.parquet"}, {"uncompressed", "-"}}) {
    auto uris = Write(Reader({Sales()}), dir_ + "/c-" + codec, "glueparquet", {{"compression", codec}}, {}, {}, &random_);
    ASSERT_TRUE(uris.ok()) << codec << ": " << uris.status().ToString();
    ASSERT_EQ(uris->size(), 1u);
    const std::string& uri = (*uris)[0];
    if (infix == "-") EXPECT_TRUE(std::regex_match(fs::path(uri).filename().string(), std::regex(R"(part-00000-[0-9a-f-]{36}\.parquet)"))) << uri;
    else EXPECT_NE(uri.find(infix), std::string::npos) << uri;
    auto table = ReadParquet(uri);
    EXPECT_EQ(table->num_rows(), 6);
    EXPECT_TRUE(table->column(0)->chunk(0)->Equals(*A(arrow::int64(), "[1, 2, 3, 4, 5, 6]")));
  }
  auto bad = Write(Reader({Sales()}), dir_ + "/bad", "parquet", {{"compression", "rot13"}}, {}, {}, &random_);
  EXPECT_FALSE(bad.ok());
  EXPECT_FALSE(Write(Reader({Sales()}), dir_ + "/bad", "avro", {}, {}, {}, &random_).ok());
}

TEST_F(WriterTest, CsvWithHeaderSeparatorAndGzipReadsBack) {
  auto uris = Write(Reader({Sales()}), dir_ + "/csv", "csv", {{"separator", "|"}, {"compression", "gzip"}}, {}, {}, &random_);
  ASSERT_TRUE(uris.ok()) << uris.status().ToString();
  ASSERT_EQ(uris->size(), 1u);
  EXPECT_TRUE(std::regex_match(fs::path((*uris)[0]).filename().string(), std::regex(R"(part-00000-[0-9a-f-]{36}\.csv\.gz)")));
  auto raw = *arrow::io::ReadableFile::Open((*uris)[0]);
  auto codec = *arrow::util::Codec::Create(arrow::Compression::GZIP);
  auto input = *arrow::io::CompressedInputStream::Make(codec.get(), raw);
  auto text = *input->Read(1 << 20);
  EXPECT_EQ(text->ToString(),
            "\"id\"|\"day\"|\"name\"|\"amount\"\n1|2024-02-29|\"a\"|1.50\n2|2024-03-01|\"b\"|2.00\n"
            "3|2024-02-29|\"c\"|3.25\n4||\"d\"|4.00\n5|2024-03-01|\"e\"|\n6|2024-02-29|\"f\"|6.10\n");
  auto custom = Write(Reader({Batch({{"s", A(arrow::utf8(), R"(["a'b", "c,d", "e"])")}, {"d", A(arrow::float64(), "[1, 2.5, null]")}})}),
                      dir_ + "/csv2", "csv", {{"quoteChar", "'"}, {"writeHeader", "false"}}, {}, {}, &random_);
  ASSERT_TRUE(custom.ok()) << custom.status().ToString();
  EXPECT_EQ(Slurp((*custom)[0]), "'a''b',1.0\n'c,d',2.5\ne,\n");
}

TEST_F(WriterTest, JsonLinesOmitNullFieldsAndNestChoicesAsValues) {
  auto uris = Write(Reader({Batch({{"a", A(arrow::int32(), "[1, null]")},
                                   {"s", A(arrow::struct_({arrow::field("x", arrow::utf8())}), R"([{"x": "q\""}, {"x": null}])")},
                                   {"l", A(arrow::list(arrow::float64()), "[[1.5], []]")}})}),
                    dir_ + "/json", "json", {}, {}, {}, &random_);
  ASSERT_TRUE(uris.ok()) << uris.status().ToString();
  EXPECT_EQ(Slurp((*uris)[0]), "{\"a\":1,\"s\":{\"x\":\"q\\\"\"},\"l\":[1.5]}\n{\"s\":{\"x\":null},\"l\":[]}\n");
}

TEST_F(WriterTest, OrcReadsBack) {
  auto uris = Write(Reader({Sales()}), dir_ + "/orc", "orc", {}, {"day"}, {}, &random_);
  ASSERT_TRUE(uris.ok()) << uris.status().ToString();
  int64_t rows = 0;
  for (const auto& uri : *uris) {
    EXPECT_NE(uri.find(".snappy.orc"), std::string::npos);
    auto file = *arrow::io::ReadableFile::Open(uri);
    auto reader = arrow::adapters::orc::ORCFileReader::Open(file, arrow::default_memory_pool());
    ASSERT_TRUE(reader.ok()) << reader.status().ToString();
    auto table = *(*reader)->Read();
    rows += table->num_rows();
    EXPECT_EQ(table->schema()->GetFieldIndex("day"), -1);
  }
  EXPECT_EQ(rows, 6);
}

TEST_F(WriterTest, ChoicesAreWrittenAsStructs) {
  auto codes = A(arrow::int8(), "[0, 1]");
  auto offsets = A(arrow::int32(), "[0, 0]");
  auto u = *arrow::DenseUnionArray::Make(*codes, *offsets, arrow::ArrayVector{A(arrow::int64(), "[5]"), A(arrow::utf8(), R"(["x"])")},
                                         std::vector<std::string>{"long", "string"});
  auto uris = Write(Reader({Batch({{"c", u}})}), dir_ + "/u", "parquet", {}, {}, {}, &random_);
  ASSERT_TRUE(uris.ok()) << uris.status().ToString();
  auto t = ReadParquet((*uris)[0]);
  auto expected = A(arrow::struct_({arrow::field("long", arrow::int64()), arrow::field("string", arrow::utf8())}),
                    R"([{"long": 5, "string": null}, {"long": null, "string": "x"}])");
  EXPECT_TRUE(t->column(0)->chunk(0)->Equals(*expected)) << t->column(0)->ToString();
}

TEST_F(WriterTest, FilesRollByRecordsAndWhenTooManyAreOpen) {
  std::vector<std::shared_ptr<arrow::RecordBatch>> batches;
  for (int b = 0; b < 5; ++b) {
    batches.push_back(Batch({{"k", A(arrow::int32(), "[0, 1, 2, 3, 4]")}, {"v", A(arrow::int32(), "[" + std::to_string(b) + ", 1, 2, 3, 4]")}}));
  }
  WriteLimits limits;
  limits.max_open_files = 2;
  auto uris = Write(Reader(batches), dir_ + "/roll", "parquet", {}, {"k"}, {}, &random_, limits);
  ASSERT_TRUE(uris.ok()) << uris.status().ToString();
  EXPECT_GT(uris->size(), 5u);  // partitions were closed and reopened
  int64_t rows = 0;
  for (const auto& uri : *uris) rows += ReadParquet(uri)->num_rows();
  EXPECT_EQ(rows, 25);
  auto by_records = Write(Reader(batches), dir_ + "/roll2", "csv", {{"maxRecordsPerFile", "10"}}, {}, {}, &random_);
  ASSERT_TRUE(by_records.ok());
  EXPECT_EQ(by_records->size(), 3u);  // 10 + 10 + 5 (rolled between batches)
}

TEST_F(WriterTest, AFailedWriteLeavesNoFileAndNoPartialFileIsEverVisible) {
  auto reader = std::make_shared<FailingReader>(Sales(), 3, dir_ + "/atomic");
  auto uris = Write(reader, dir_ + "/atomic", "parquet", {}, {"day"}, {}, &random_);
  ASSERT_FALSE(uris.ok());
  EXPECT_NE(uris.status().message().find("broken input"), std::string::npos);
  EXPECT_NE(uris.status().message().find(dir_ + "/atomic"), std::string::npos);
  EXPECT_GT(reader->temps_seen, 0);        // files were being written...
  EXPECT_EQ(reader->visible_files, 0);     // ...under hidden names only
  EXPECT_TRUE(Files(dir_ + "/atomic").empty());  // and nothing is left
}

TEST_F(WriterTest, UnwritableTargetNamesThePath) {
  std::ofstream(dir_ + "/plainfile") << "x";
  auto uris = Write(Reader({Sales()}), dir_ + "/plainfile/out", "csv", {}, {}, {}, &random_);
  ASSERT_FALSE(uris.ok());
  EXPECT_NE(uris.status().message().find(dir_ + "/plainfile/out"), std::string::npos) << uris.status().message();
  if (geteuid() != 0) {
    fs::create_directories(dir_ + "/ro");
    fs::permissions(dir_ + "/ro", fs::perms::owner_read | fs::perms::owner_exec);
    auto ro = Write(Reader({Sales()}), dir_ + "/ro", "csv", {}, {}, {}, &random_);
    ASSERT_FALSE(ro.ok());
    EXPECT_NE(ro.status().message().find(dir_ + "/ro/"), std::string::npos) << ro.status().message();
    fs::permissions(dir_ + "/ro", fs::perms::owner_all);
  }
  auto missing_key = Write(Reader({Sales()}), dir_ + "/x", "csv", {}, {"nope"}, {}, &random_);
  ASSERT_FALSE(missing_key.ok());
  EXPECT_NE(missing_key.status().message().find("nope"), std::string::npos);
}

TEST_F(WriterTest, EmbeddedStoreTargetsAndDeletePrefix) {
  fs::create_directories(dir_ + "/s3/bkt");
  storage::StorageOptions store;
  store.s3_root = dir_ + "/s3";
  auto uris = Write(Reader({Sales()}), "s3://bkt/sales/", "json", {}, {"day"}, store, &random_);
  ASSERT_TRUE(uris.ok()) << uris.status().ToString();
  for (const auto& uri : *uris) {
    EXPECT_EQ(uri.rfind("s3://bkt/sales/day=", 0), 0u) << uri;
    EXPECT_TRUE(fs::exists(dir_ + "/s3/" + uri.substr(5)));
  }
  EXPECT_FALSE(Write(Reader({Sales()}), "s3://bkt/../x", "json", {}, {}, store, &random_).ok());
  std::ofstream(dir_ + "/s3/bkt/sales/keep.txt") << "k";
  auto now = std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::system_clock::now().time_since_epoch()).count();
  // Nothing was modified before an hour ago.
  auto none = DeletePrefix("s3://bkt/sales", store, now - 3600 * 1000, {});
  ASSERT_TRUE(none.ok());
  EXPECT_TRUE(none->empty());
  auto deleted = DeletePrefix("s3://bkt/sales", store, std::nullopt, {"**.txt"});
  ASSERT_TRUE(deleted.ok()) << deleted.status().ToString();
  EXPECT_EQ(deleted->size(), uris->size());
  EXPECT_TRUE(fs::exists(dir_ + "/s3/bkt/sales/keep.txt"));
  auto rest = DeletePrefix("s3://bkt/sales/", store, now + 1000, {});
  ASSERT_TRUE(rest.ok());
  EXPECT_EQ(*rest, std::vector<std::string>{"s3://bkt/sales/keep.txt"});
  auto missing = DeletePrefix("s3://bkt/none", store, std::nullopt, {});
  ASSERT_TRUE(missing.ok());
  EXPECT_TRUE(missing->empty());
}

}  // namespace
}  // namespace openglue::engine
