#include "storage/columnar_footer.h"

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include <arrow/buffer.h>
#include <arrow/io/memory.h>
#include <gtest/gtest.h>

namespace openglue::storage {
namespace {

// src/storage/testdata/footer/ (make_footers.py writes it).
std::string Testdata(const std::string& name) {
  std::ifstream in(std::filesystem::path(__FILE__).parent_path() / "testdata" / "footer" / name, std::ios::binary);
  std::stringstream out;
  out << in.rdbuf();
  EXPECT_FALSE(out.str().empty()) << name;
  return out.str();
}

std::string LittleEndian(uint32_t n) {
  std::string out(4, '\0');
  for (int i = 0; i < 4; ++i) out[i] = static_cast<char>((n >> (8 * i)) & 0xff);
  return out;
}

Result<FooterCost> CheckParquet(const std::string& data, const FooterLimits& limits = {}) {
  arrow::io::BufferReader file(arrow::Buffer::FromString(data));
  return CheckParquetFooter(&file, limits);
}

Result<FooterCost> CheckOrc(const std::string& data, const FooterLimits& limits = {}) {
  arrow::io::BufferReader file(arrow::Buffer::FromString(data));
  return CheckOrcFooter(&file, limits);
}

TEST(ParquetFooter, RealFilesPass) {
  for (const char* name : {"tiny_none.parquet", "tiny_snappy.parquet"}) {
    std::string data = Testdata(name);
    Result<FooterCost> cost = CheckParquet(data);
    ASSERT_TRUE(cost.ok()) << name << ": " << cost.status().ToString();
    EXPECT_GT(cost->footer_bytes, 100);
    EXPECT_LT(cost->footer_bytes, static_cast<int64_t>(data.size()));
    // 3 columns: a handful of schema elements and one row group's column chunks.
    EXPECT_LT(cost->memory_bytes, kParquetFirstRead + 64 * kDecodedElementBytes);
  }
}

TEST(ParquetFooter, LengthPastTheFileIsRefused) {
  // The file, small: PAR1, then nothing, then a length of size-12 (fits) and size-11.
  const int64_t size = 1000;
  std::string body(static_cast<size_t>(size - 12), '\0');
  std::string fits = "PAR1" + body + LittleEndian(static_cast<uint32_t>(size - 12)) + "PAR1";
  EXPECT_TRUE(ParquetMetadataLength(fits.substr(fits.size() - 8), size, {}).ok());
  std::string past = "PAR1" + body + LittleEndian(static_cast<uint32_t>(size - 11)) + "PAR1";
  Result<int64_t> length = ParquetMetadataLength(past.substr(past.size() - 8), size, {});
  ASSERT_FALSE(length.ok());
  EXPECT_NE(length.status().message().find("declares 989 bytes of metadata in a file of 1000 bytes"), std::string::npos)
      << length.status().message();
  EXPECT_FALSE(CheckParquet(Testdata("parquet_length_past_file.parquet")).ok());
}

TEST(ParquetFooter, LengthOverTheLimitIsRefusedBeforeItIsRead) {
  FooterLimits limits;
  limits.max_footer_bytes = 100;
  std::string data = "PAR1" + std::string(200, '\0') + LittleEndian(200) + "PAR1";
  Result<int64_t> length = ParquetMetadataLength(data.substr(data.size() - 8), static_cast<int64_t>(data.size()), limits);
  ASSERT_FALSE(length.ok());
  EXPECT_NE(length.status().message().find("more than the 100 allowed"), std::string::npos);
}

TEST(ParquetFooter, WrongMagicAndEncryptedFootersAreRefused) {
  EXPECT_FALSE(ParquetMetadataLength(LittleEndian(10) + "PAR2", 100, {}).ok());
  EXPECT_NE(ParquetMetadataLength(LittleEndian(10) + "PARE", 100, {}).status().message().find("encrypted"),
            std::string::npos);
  EXPECT_FALSE(ParquetMetadataLength("PAR1", 100, {}).ok());
  EXPECT_FALSE(CheckParquet("PAR1PAR1").ok());
}

TEST(ParquetFooter, ContainersAreCountedAndMustFitTheirBytes) {
  // A list of a million structs declared in a dozen bytes: refused, nothing allocated.
  Result<int64_t> huge = EstimateParquetMetadataMemory(Testdata("parquet_huge_list.parquet").substr(4, 15));
  ASSERT_FALSE(huge.ok());
  EXPECT_NE(huge.status().message().find("container of 1000000 elements"), std::string::npos)
      << huge.status().message();
  // Field 2, a list of 20,000 empty structs: 20,000 bytes, estimated at kDecodedElementBytes each.
  std::string list = std::string("\x19\xfc", 2) + std::string("\xa0\x9c\x01", 3) + std::string(20000, '\0') +
                     std::string(1, '\0');
  Result<int64_t> many = EstimateParquetMetadataMemory(list);
  ASSERT_TRUE(many.ok()) << many.status().ToString();
  EXPECT_EQ(*many, static_cast<int64_t>(list.size()) + kParquetFirstRead + 20000 * kDecodedElementBytes);
  // The same in a file, with a memory limit under that estimate.
  std::string data = "PAR1" + list + LittleEndian(static_cast<uint32_t>(list.size())) + "PAR1";
  FooterLimits limits;
  limits.max_memory_bytes = 16 << 20;
  Result<FooterCost> cost = CheckParquet(data, limits);
  ASSERT_FALSE(cost.ok());
  EXPECT_NE(cost.status().message().find("would take about 30 MiB to decode, more than the 16 MiB allowed"),
            std::string::npos)
      << cost.status().message();
}

TEST(ParquetFooter, DeepNestingAndTruncationAreRefused) {
  EXPECT_NE(CheckParquet(Testdata("parquet_deep.parquet")).status().message().find("nests deeper"), std::string::npos);
  EXPECT_FALSE(EstimateParquetMetadataMemory("").ok());
  EXPECT_FALSE(EstimateParquetMetadataMemory("\x18\x05").ok());  // a binary field of 5 bytes in none
  EXPECT_FALSE(EstimateParquetMetadataMemory("\x1d").ok());      // an unknown type
  EXPECT_TRUE(EstimateParquetMetadataMemory(std::string(1, '\0')).ok());
}

TEST(OrcFooter, RealFilesPass) {
  for (const char* name : {"tiny_uncompressed.orc", "tiny_zlib.orc", "tiny_zstd.orc"}) {
    Result<FooterCost> cost = CheckOrc(Testdata(name));
    ASSERT_TRUE(cost.ok()) << name << ": " << cost.status().ToString();
    EXPECT_GT(cost->footer_bytes, 10) << name;
    EXPECT_LT(cost->memory_bytes, 64 << 20) << name;
  }
}

TEST(OrcFooter, DeclaredSizesAreChecked) {
  Result<FooterCost> huge = CheckOrc(Testdata("orc_huge_footer.orc"));
  ASSERT_FALSE(huge.ok());
  EXPECT_NE(huge.status().message().find("declares a footer of 1099511627776"), std::string::npos)
      << huge.status().message();
  Result<FooterCost> block = CheckOrc(Testdata("orc_huge_block.orc"));
  ASSERT_FALSE(block.ok());
  EXPECT_NE(block.status().message().find("compression block of 1099511627776 bytes"), std::string::npos)
      << block.status().message();
  // The footer fits the limit but not the file.
  std::string small = Testdata("tiny_zlib.orc");
  std::string tail = small.substr(small.size() - 256);
  Result<OrcPostscript> ps = ParseOrcPostscript(tail, static_cast<int64_t>(small.size()), {});
  ASSERT_TRUE(ps.ok()) << ps.status().ToString();
  EXPECT_FALSE(ParseOrcPostscript(tail, ps->footer_bytes, {}).ok());
  EXPECT_FALSE(ParseOrcPostscript("", 0, {}).ok());
  EXPECT_FALSE(ParseOrcPostscript(std::string(1, '\0'), 1, {}).ok());
  EXPECT_FALSE(ParseOrcPostscript(std::string("\x08\xff\x02", 3), 3, {}).ok());  // a truncated varint
}

TEST(OrcFooter, CompressedChunksAreBoundedByTheirBlocks) {
  Result<FooterCost> bomb = CheckOrc(Testdata("orc_chunk_bomb.orc"));
  ASSERT_FALSE(bomb.ok());
  EXPECT_NE(bomb.status().message().find("would take about"), std::string::npos) << bomb.status().message();
  OrcPostscript ps;
  ps.compression = 1;
  ps.block_bytes = 1000;
  // Two compressed chunks of 1 byte, one original chunk of 2 bytes: at most 2,002 bytes decompressed.
  std::string footer = std::string("\x02\x00\x00x\x02\x00\x00y\x05\x00\x00zz", 13);
  Result<int64_t> memory = EstimateOrcFooterMemory(footer, ps);
  ASSERT_TRUE(memory.ok()) << memory.status().ToString();
  EXPECT_EQ(*memory, 13 + 16 * 1024 + 1000 + 2002 * kOrcDecodedFactor);
  EXPECT_FALSE(EstimateOrcFooterMemory(footer.substr(0, 12), ps).ok());  // the last chunk cut
  EXPECT_FALSE(EstimateOrcFooterMemory(footer.substr(0, 10), ps).ok());  // a header cut
  ps.block_bytes = 1;
  EXPECT_FALSE(EstimateOrcFooterMemory(footer, ps).ok());  // an original chunk over the block
}

TEST(OrcFooter, DecimalsArrowWouldAbortOnAreRefused) {
  // Footer.types (4): a Type {kind (1): DECIMAL (14), precision (5): 39}.
  Status over = CheckOrcFooterTypes(std::string("\x22\x04\x08\x0e\x28\x27", 6));
  EXPECT_NE(over.message().find("a decimal of precision 39 (at most 38)"), std::string::npos) << over.message();
  EXPECT_TRUE(CheckOrcFooterTypes(std::string("\x22\x04\x08\x0e\x28\x26", 6)).ok());  // 38
  // DECIMAL, then a kind the enum does not define: protobuf keeps DECIMAL (footer_fuzz's find).
  EXPECT_FALSE(CheckOrcFooterTypes(std::string("\x22\x06\x08\x0e\x28\x74\x08\x30", 8)).ok());
  EXPECT_FALSE(CheckOrcFooterTypes(std::string("\x22\x09", 2)).ok());  // a Type past the end
  // footer_fuzz's finds, whole files (also in its corpus): refused before Arrow sees them.
  for (const char* name : {"orc_decimal_precision_crash.orc", "orc_decimal_unknown_kind_crash.orc"}) {
    Result<FooterCost> cost = CheckOrc(Testdata(name));
    ASSERT_FALSE(cost.ok()) << name;
    EXPECT_NE(cost.status().message().find("decimal of precision"), std::string::npos) << cost.status().message();
  }
}

}  // namespace
}  // namespace openglue::storage
