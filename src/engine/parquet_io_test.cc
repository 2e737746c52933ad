// Arrow's builder headers expand a bare RETURN_NOT_OK inside inline functions, and
// common/status.h defines openglue's own RETURN_NOT_OK for openglue::Status. Whichever is seen
// first wins, so the Arrow headers must be read before any openglue header until status.h
// gives its macros a prefix of their own (as Arrow does with ARROW_RETURN_NOT_OK).
#include <arrow/api.h>
#undef RETURN_NOT_OK  // Arrow's fallback alias; openglue's is defined by common/status.h.

#include "engine/parquet_io.h"

#include <stdlib.h>

#include <cstdint>
#include <filesystem>
#include <fstream>
#include <memory>
#include <string>
#include <vector>

#include <gtest/gtest.h>

namespace openglue::engine {
namespace {

namespace fs = std::filesystem;

constexpr int64_t kRows = 5000;

std::shared_ptr<arrow::Schema> OrdersSchema() {
  return arrow::schema({
      arrow::field("order_id", arrow::int64(), /*nullable=*/false),
      arrow::field("amount", arrow::float64(), /*nullable=*/false),
      arrow::field("customer", arrow::utf8(), /*nullable=*/false),
      arrow::field("ordered_at", arrow::timestamp(arrow::TimeUnit::MICRO, "UTC"),
                   /*nullable=*/false),
      arrow::field("discount", arrow::float64(), /*nullable=*/true),
  });
}

template <typename T>
T ValueOrDie(arrow::Result<T> result) {
  EXPECT_TRUE(result.ok()) << result.status().ToString();
  return std::move(result).ValueOrDie();
}

// Rows of a small orders table; every seventh discount is null.
std::shared_ptr<arrow::Table> MakeOrders(int64_t rows) {
  std::shared_ptr<arrow::Schema> schema = OrdersSchema();
  arrow::Int64Builder order_id;
  arrow::DoubleBuilder amount;
  arrow::StringBuilder customer;
  arrow::TimestampBuilder ordered_at(schema->field(3)->type(), arrow::default_memory_pool());
  arrow::DoubleBuilder discount;
  const int64_t kStartMicros = 1'700'000'000'000'000;  // 2023-11-14T22:13:20Z
  for (int64_t i = 0; i < rows; ++i) {
    EXPECT_TRUE(order_id.Append(1'000'000 + i).ok());
    EXPECT_TRUE(amount.Append(static_cast<double>(i) * 1.25 + 0.01).ok());
    EXPECT_TRUE(customer.Append("customer-" + std::to_string(i % 97)).ok());
    EXPECT_TRUE(ordered_at.Append(kStartMicros + i * 1'000'003).ok());
    EXPECT_TRUE((i % 7 == 0 ? discount.AppendNull() : discount.Append(i % 10 * 0.5)).ok());
  }
  std::vector<std::shared_ptr<arrow::Array>> columns = {
      ValueOrDie(order_id.Finish()), ValueOrDie(amount.Finish()), ValueOrDie(customer.Finish()),
      ValueOrDie(ordered_at.Finish()), ValueOrDie(discount.Finish())};
  return arrow::Table::Make(schema, columns, rows);
}

class ParquetIoTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string pattern = (fs::temp_directory_path() / "parquet_io_test.XXXXXX").string();
    ASSERT_NE(::mkdtemp(pattern.data()), nullptr);
    dir_ = pattern;
  }
  void TearDown() override {
    std::error_code ec;
    fs::remove_all(dir_, ec);
  }

  std::string PathOf(const std::string& name) const { return (dir_ / name).string(); }

  void WriteBytes(const std::string& path, const std::string& bytes) const {
    std::ofstream out(path, std::ios::binary | std::ios::trunc);
    out << bytes;
    ASSERT_TRUE(out.good());
  }

  std::vector<std::string> ListDir(const fs::path& dir) const {
    std::vector<std::string> names;
    for (const fs::directory_entry& entry : fs::directory_iterator(dir)) {
      names.push_back(entry.path().filename().string());
    }
    return names;
  }

  fs::path dir_;
};

TEST_F(ParquetIoTest, RoundTripPreservesRowsTypesAndNulls) {
  std::shared_ptr<arrow::Table> orders = MakeOrders(kRows);
  const std::string path = PathOf("orders.parquet");

  Status written = WriteParquet(orders, path);
  ASSERT_TRUE(written.ok()) << written.ToString();
  Result<std::shared_ptr<arrow::Table>> read = ReadParquet(path);
  ASSERT_TRUE(read.ok()) << read.status().ToString();

  const arrow::Table& back = **read;
  EXPECT_EQ(back.num_rows(), kRows);
  EXPECT_TRUE(back.schema()->Equals(*OrdersSchema()))
      << "read back: " << back.schema()->ToString();
  EXPECT_EQ(back.GetColumnByName("discount")->null_count(), (kRows + 6) / 7);
  EXPECT_TRUE(back.Equals(*orders));
}

TEST_F(ParquetIoTest, WriteCreatesParentDirectoriesAndLeavesOnlyTheFile) {
  const std::string path = PathOf("year=2024/month=01/part-0.parquet");
  Status written = WriteParquet(MakeOrders(10), path);
  ASSERT_TRUE(written.ok()) << written.ToString();
  EXPECT_EQ(ListDir(fs::path(path).parent_path()), std::vector<std::string>{"part-0.parquet"});
}

TEST_F(ParquetIoTest, WriteReplacesAnExistingFile) {
  const std::string path = PathOf("orders.parquet");
  ASSERT_TRUE(WriteParquet(MakeOrders(100), path).ok());
  ASSERT_TRUE(WriteParquet(MakeOrders(3), path).ok());
  Result<std::shared_ptr<arrow::Table>> read = ReadParquet(path);
  ASSERT_TRUE(read.ok()) << read.status().ToString();
  EXPECT_EQ((*read)->num_rows(), 3);
  EXPECT_EQ(ListDir(dir_), std::vector<std::string>{"orders.parquet"});
}

TEST_F(ParquetIoTest, WriteNullTableIsInvalidInput) {
  const std::string path = PathOf("null.parquet");
  Status written = WriteParquet(nullptr, path);
  EXPECT_EQ(written.code(), StatusCode::kInvalidInput);
  EXPECT_NE(written.message().find(path), std::string::npos) << written.message();
  EXPECT_FALSE(fs::exists(path));
}

TEST_F(ParquetIoTest, WriteInconsistentTableIsInvalidInput) {
  // Columns shorter than the declared row count: the encoder must never see this table.
  std::shared_ptr<arrow::Table> orders = MakeOrders(10);
  std::shared_ptr<arrow::Table> broken =
      arrow::Table::Make(orders->schema(), orders->columns(), /*num_rows=*/20);
  const std::string path = PathOf("broken.parquet");
  Status written = WriteParquet(broken, path);
  EXPECT_EQ(written.code(), StatusCode::kInvalidInput) << written.ToString();
  EXPECT_EQ(ListDir(dir_), std::vector<std::string>{});
}

TEST_F(ParquetIoTest, WriteOntoADirectoryIsInvalidInput) {
  Status written = WriteParquet(MakeOrders(10), dir_.string());
  EXPECT_EQ(written.code(), StatusCode::kInvalidInput) << written.ToString();
  Status under_a_file = WriteParquet(MakeOrders(10), PathOf("x.parquet"));
  ASSERT_TRUE(under_a_file.ok());
  under_a_file = WriteParquet(MakeOrders(10), PathOf("x.parquet/y.parquet"));
  EXPECT_EQ(under_a_file.code(), StatusCode::kInvalidInput) << under_a_file.ToString();
}

TEST_F(ParquetIoTest, UrisAreRejectedNotTakenForRelativePaths) {
  const std::string uri = "file://" + PathOf("orders.parquet");
  Status written = WriteParquet(MakeOrders(10), uri);
  EXPECT_EQ(written.code(), StatusCode::kInvalidInput) << written.ToString();
  EXPECT_NE(written.message().find(uri), std::string::npos) << written.message();
  EXPECT_FALSE(fs::exists("file:"));
  EXPECT_EQ(ReadParquet("s3://bucket/orders.parquet").status().code(), StatusCode::kInvalidInput);
}

TEST_F(ParquetIoTest, ReadMissingFileIsInvalidInputNamingThePath) {
  const std::string path = PathOf("no-such.parquet");
  Result<std::shared_ptr<arrow::Table>> read = ReadParquet(path);
  ASSERT_FALSE(read.ok());
  EXPECT_EQ(read.status().code(), StatusCode::kInvalidInput);
  EXPECT_NE(read.status().message().find(path), std::string::npos) << read.status().message();
}

TEST_F(ParquetIoTest, ReadGarbageIsInvalidInputNamingThePath) {
  const std::string path = PathOf("garbage.parquet");
  WriteBytes(path, std::string("this is not a parquet file, just some bytes\n") +
                       std::string(1000, '\x7f'));
  Result<std::shared_ptr<arrow::Table>> read = ReadParquet(path);
  ASSERT_FALSE(read.ok());
  EXPECT_EQ(read.status().code(), StatusCode::kInvalidInput) << read.status().ToString();
  EXPECT_NE(read.status().message().find(path), std::string::npos) << read.status().message();
}

TEST_F(ParquetIoTest, ReadTruncatedFileIsInvalidInput) {
  const std::string path = PathOf("orders.parquet");
  ASSERT_TRUE(WriteParquet(MakeOrders(kRows), path).ok());
  fs::resize_file(path, fs::file_size(path) / 2);
  Result<std::shared_ptr<arrow::Table>> read = ReadParquet(path);
  ASSERT_FALSE(read.ok());
  EXPECT_EQ(read.status().code(), StatusCode::kInvalidInput) << read.status().ToString();
}

TEST_F(ParquetIoTest, ReadDirectoryIsInvalidInput) {
  Result<std::shared_ptr<arrow::Table>> read = ReadParquet(dir_.string());
  ASSERT_FALSE(read.ok());
  EXPECT_EQ(read.status().code(), StatusCode::kInvalidInput) << read.status().ToString();
}

}  // namespace
}  // namespace openglue::engine
