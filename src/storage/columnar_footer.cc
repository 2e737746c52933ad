#include "storage/columnar_footer.h"

#include <algorithm>
#include <cstring>
#include <memory>
#include <string>

#include <arrow/buffer.h>
#include <arrow/io/interfaces.h>
#include <arrow/util/compression.h>

namespace openglue::storage {

namespace {

constexpr int kMaxThriftDepth = 32;
// What liborc reads from the end of a file before it knows the footer's length.
constexpr int64_t kOrcFirstRead = 16 * 1024;
constexpr int64_t kOrcMaxCompression = 5;  // ZSTD
constexpr uint64_t kOrcDecimalKind = 14;
constexpr uint64_t kMaxDecimalPrecision = 38;  // Arrow's Decimal128Type aborts the process above it

std::string MiB(int64_t bytes) {
  return std::to_string((bytes + (int64_t{1} << 20) - 1) >> 20) + " MiB";
}

// Reads bytes of Thrift's compact encoding (or protobuf's varints) from a string_view.
class Cursor {
 public:
  explicit Cursor(std::string_view in) : in_(in) {}
  size_t remaining() const { return in_.size() - pos_; }
  bool Byte(uint8_t* out) {
    if (pos_ >= in_.size()) return false;
    *out = static_cast<uint8_t>(in_[pos_++]);
    return true;
  }
  bool Varint(uint64_t* out) {
    uint64_t value = 0;
    for (int shift = 0; shift < 64; shift += 7) {
      uint8_t b = 0;
      if (!Byte(&b)) return false;
      value |= static_cast<uint64_t>(b & 0x7f) << shift;
      if (!(b & 0x80)) {
        *out = value;
        return true;
      }
    }
    return false;
  }
  bool Skip(uint64_t n) {
    if (n > remaining()) return false;
    pos_ += static_cast<size_t>(n);
    return true;
  }
  bool Take(uint64_t n, std::string_view* out) {
    if (n > remaining()) return false;
    *out = in_.substr(pos_, static_cast<size_t>(n));
    pos_ += static_cast<size_t>(n);
    return true;
  }

 private:
  std::string_view in_;
  size_t pos_ = 0;
};

// Walks Thrift's compact encoding without decoding it, counting container elements.
class CompactWalker {
 public:
  explicit CompactWalker(std::string_view in) : in_(in) {}
  int64_t elements() const { return elements_; }

  Status Struct(int depth) {
    if (depth > kMaxThriftDepth) return Bad("nests deeper than " + std::to_string(kMaxThriftDepth));
    for (;;) {
      uint8_t header = 0;
      if (!in_.Byte(&header)) return Truncated();
      if (header == 0) return Status::OK();  // stop
      int type = header & 0x0f;
      if ((header >> 4) == 0) {  // a long-form field id
        uint64_t id = 0;
        if (!in_.Varint(&id)) return Truncated();
      }
      if (type == 1 || type == 2) continue;  // a bool field's value is its type
      OG_RETURN_NOT_OK(Value(type, depth + 1));
    }
  }

 private:
  // One value of `type` (inside a container, a bool is one byte).
  Status Value(int type, int depth) {
    if (depth > kMaxThriftDepth) return Bad("nests deeper than " + std::to_string(kMaxThriftDepth));
    uint64_t n = 0;
    switch (type) {
      case 1: case 2: case 3:  // bool (in a container), byte
        return in_.Skip(1) ? Status::OK() : Truncated();
      case 4: case 5: case 6:  // i16, i32, i64: zigzag varints
        return in_.Varint(&n) ? Status::OK() : Truncated();
      case 7:  // double
        return in_.Skip(8) ? Status::OK() : Truncated();
      case 8:  // binary
        if (!in_.Varint(&n) || !in_.Skip(n)) return Truncated();
        return Status::OK();
      case 9: case 10: {  // list, set
        uint8_t header = 0;
        if (!in_.Byte(&header)) return Truncated();
        n = header >> 4;
        if (n == 15 && !in_.Varint(&n)) return Truncated();
        return Elements(n, header & 0x0f, -1, depth);
      }
      case 11: {  // map
        if (!in_.Varint(&n)) return Truncated();
        if (n == 0) return Status::OK();
        uint8_t kinds = 0;
        if (!in_.Byte(&kinds)) return Truncated();
        return Elements(n, kinds >> 4, kinds & 0x0f, depth);
      }
      case 12:
        return Struct(depth);
      default:
        return Bad("holds an unknown Thrift type " + std::to_string(type));
    }
  }

  // `n` elements of `type` (and, for a map, `value_type`): each takes at least a byte, so a count
  // over the bytes left is refused before anything is walked.
  Status Elements(uint64_t n, int type, int value_type, int depth) {
    if (n > in_.remaining()) {
      return Bad("declares a container of " + std::to_string(n) + " elements in " +
                 std::to_string(in_.remaining()) + " bytes");
    }
    elements_ += static_cast<int64_t>(n);
    for (uint64_t i = 0; i < n; ++i) {
      OG_RETURN_NOT_OK(Value(type, depth + 1));
      if (value_type >= 0) OG_RETURN_NOT_OK(Value(value_type, depth + 1));
    }
    return Status::OK();
  }

  static Status Bad(const std::string& why) { return Status::InvalidInput("the Parquet footer " + why); }
  static Status Truncated() { return Bad("is truncated or malformed"); }

  Cursor in_;
  int64_t elements_ = 0;
};

Result<std::string> ReadRange(arrow::io::RandomAccessFile* file, int64_t offset, int64_t length) {
  arrow::Result<std::shared_ptr<arrow::Buffer>> buffer = file->ReadAt(offset, length);
  if (!buffer.ok()) return Status::Internal("cannot read the footer: " + buffer.status().message());
  if ((*buffer)->size() != length) return Status::InvalidInput("the file is shorter than its size");
  return (*buffer)->ToString();
}

Result<int64_t> FileSize(arrow::io::RandomAccessFile* file) {
  arrow::Result<int64_t> size = file->GetSize();
  if (!size.ok()) return Status::Internal("cannot read the file's size: " + size.status().message());
  return *size;
}

Status OverMemory(const char* format, int64_t memory, const FooterLimits& limits) {
  if (memory <= limits.max_memory_bytes) return Status::OK();
  return Status::InvalidInput(std::string("the ") + format + " footer would take about " + MiB(memory) +
                              " to decode, more than the " + MiB(limits.max_memory_bytes) + " allowed");
}

}  // namespace

Result<int64_t> ParquetMetadataLength(std::string_view tail, int64_t file_size, const FooterLimits& limits) {
  if (file_size < 12 || tail.size() != 8) return Status::InvalidInput("the Parquet file is too short for a footer");
  std::string_view magic = tail.substr(4);
  if (magic == "PARE") return Status::InvalidInput("the Parquet footer is encrypted (not supported)");
  if (magic != "PAR1") return Status::InvalidInput("the Parquet file does not end in PAR1");
  uint32_t length = 0;
  for (int i = 3; i >= 0; --i) length = (length << 8) | static_cast<uint8_t>(tail[i]);
  if (static_cast<int64_t>(length) > file_size - 12) {
    return Status::InvalidInput("the Parquet footer declares " + std::to_string(length) +
                                " bytes of metadata in a file of " + std::to_string(file_size) + " bytes");
  }
  if (static_cast<int64_t>(length) > limits.max_footer_bytes) {
    return Status::InvalidInput("the Parquet footer declares " + std::to_string(length) +
                                " bytes of metadata, more than the " + std::to_string(limits.max_footer_bytes) +
                                " allowed");
  }
  if (length == 0) return Status::InvalidInput("the Parquet footer declares no metadata");
  return static_cast<int64_t>(length);
}

Result<int64_t> EstimateParquetMetadataMemory(std::string_view metadata) {
  CompactWalker walker(metadata);
  OG_RETURN_NOT_OK(walker.Struct(0));
  return static_cast<int64_t>(metadata.size()) + kParquetFirstRead + walker.elements() * kDecodedElementBytes;
}

Result<OrcPostscript> ParseOrcPostscript(std::string_view tail, int64_t file_size, const FooterLimits& limits) {
  if (tail.empty()) return Status::InvalidInput("the ORC file is empty");
  OrcPostscript ps;
  ps.postscript_bytes = static_cast<uint8_t>(tail.back());
  if (ps.postscript_bytes == 0 || static_cast<size_t>(ps.postscript_bytes) + 1 > tail.size())
    return Status::InvalidInput("the ORC postscript length does not fit the file");
  Cursor in(tail.substr(tail.size() - 1 - static_cast<size_t>(ps.postscript_bytes),
                        static_cast<size_t>(ps.postscript_bytes)));
  auto bad = [] { return Status::InvalidInput("the ORC postscript is malformed"); };
  // Each field as declared; compared before narrowing, so a 64-bit value cannot wrap.
  uint64_t footer = 0, metadata = 0, compression = 0, block = static_cast<uint64_t>(ps.block_bytes);
  while (in.remaining() > 0) {
    uint64_t key = 0, value = 0;
    if (!in.Varint(&key)) return bad();
    switch (key & 7) {
      case 0:
        if (!in.Varint(&value)) return bad();
        switch (key >> 3) {
          case 1: footer = value; break;
          case 2: compression = value; break;
          case 3: block = value; break;
          case 5: metadata = value; break;
          default: break;
        }
        break;
      case 1: if (!in.Skip(8)) return bad(); break;
      case 2: if (!in.Varint(&value) || !in.Skip(value)) return bad(); break;
      case 5: if (!in.Skip(4)) return bad(); break;
      default: return bad();
    }
  }
  const uint64_t max_footer = static_cast<uint64_t>(limits.max_footer_bytes);
  if (footer > max_footer || metadata > max_footer) {
    return Status::InvalidInput("the ORC postscript declares a footer of " + std::to_string(footer) +
                                " and metadata of " + std::to_string(metadata) + " bytes, more than the " +
                                std::to_string(limits.max_footer_bytes) + " allowed");
  }
  if (compression > kOrcMaxCompression)
    return Status::InvalidInput("the ORC postscript declares an unknown compression " + std::to_string(compression));
  if (compression != 0 && (block == 0 || block > static_cast<uint64_t>(limits.max_orc_block_bytes))) {
    return Status::InvalidInput("the ORC postscript declares a compression block of " + std::to_string(block) +
                                " bytes (allowed: 1 to " + std::to_string(limits.max_orc_block_bytes) + ")");
  }
  ps.footer_bytes = static_cast<int64_t>(footer);
  ps.metadata_bytes = static_cast<int64_t>(metadata);
  ps.compression = static_cast<int64_t>(compression);
  ps.block_bytes = static_cast<int64_t>(block);
  if (ps.footer_bytes + ps.metadata_bytes + ps.postscript_bytes + 1 > file_size) {
    return Status::InvalidInput("the ORC postscript declares a footer of " + std::to_string(footer) +
                                " and metadata of " + std::to_string(metadata) + " bytes in a file of " +
                                std::to_string(file_size) + " bytes");
  }
  return ps;
}

Result<int64_t> EstimateOrcFooterMemory(std::string_view footer, const OrcPostscript& postscript) {
  int64_t decompressed = static_cast<int64_t>(footer.size());
  if (postscript.compression != 0) {
    decompressed = 0;
    size_t pos = 0;
    while (pos < footer.size()) {
      if (footer.size() - pos < 3) return Status::InvalidInput("the ORC footer ends inside a chunk header");
      uint32_t header = static_cast<uint8_t>(footer[pos]) | static_cast<uint32_t>(static_cast<uint8_t>(footer[pos + 1])) << 8 |
                        static_cast<uint32_t>(static_cast<uint8_t>(footer[pos + 2])) << 16;
      const bool original = header & 1;
      const int64_t length = header >> 1;
      pos += 3;
      if (static_cast<int64_t>(footer.size() - pos) < length)
        return Status::InvalidInput("an ORC footer chunk runs past the footer");
      if (original && length > postscript.block_bytes)
        return Status::InvalidInput("an ORC footer chunk is larger than the compression block");
      decompressed += original ? length : postscript.block_bytes;
      pos += static_cast<size_t>(length);
    }
  }
  return static_cast<int64_t>(footer.size()) + kOrcFirstRead +
         (postscript.compression != 0 ? postscript.block_bytes : 0) + decompressed * kOrcDecodedFactor;
}

Result<std::string> InflateOrcFooter(std::string_view footer, const OrcPostscript& postscript) {
  if (postscript.compression == 0) return std::string(footer);
  arrow::Result<std::unique_ptr<arrow::util::Codec>> codec = arrow::Status::NotImplemented("");
  switch (postscript.compression) {
    case 1: {  // ZLIB: raw deflate
      arrow::util::GZipCodecOptions options;
      options.gzip_format = arrow::util::GZipFormat::DEFLATE;
      codec = arrow::util::Codec::Create(arrow::Compression::GZIP, options);
      break;
    }
    case 2: codec = arrow::util::Codec::Create(arrow::Compression::SNAPPY); break;
    case 4: codec = arrow::util::Codec::Create(arrow::Compression::LZ4); break;  // LZ4 blocks
    case 5: codec = arrow::util::Codec::Create(arrow::Compression::ZSTD); break;
    default:
      return Status::InvalidInput("the ORC footer is LZO-compressed (not supported)");
  }
  if (!codec.ok()) return Status::Internal("no codec for the ORC footer: " + codec.status().message());
  std::string out, block(static_cast<size_t>(postscript.block_bytes), '\0');
  size_t pos = 0;
  while (pos < footer.size()) {
    if (footer.size() - pos < 3) return Status::InvalidInput("the ORC footer ends inside a chunk header");
    uint32_t header = static_cast<uint8_t>(footer[pos]) | static_cast<uint32_t>(static_cast<uint8_t>(footer[pos + 1])) << 8 |
                      static_cast<uint32_t>(static_cast<uint8_t>(footer[pos + 2])) << 16;
    const size_t length = header >> 1;
    pos += 3;
    if (footer.size() - pos < length) return Status::InvalidInput("an ORC footer chunk runs past the footer");
    std::string_view chunk = footer.substr(pos, length);
    pos += length;
    if (header & 1) {
      out.append(chunk);
      continue;
    }
    arrow::Result<int64_t> n = (*codec)->Decompress(
        static_cast<int64_t>(chunk.size()), reinterpret_cast<const uint8_t*>(chunk.data()),
        static_cast<int64_t>(block.size()), reinterpret_cast<uint8_t*>(block.data()));
    if (!n.ok()) return Status::InvalidInput("an ORC footer chunk does not decompress: " + n.status().message());
    out.append(block.data(), static_cast<size_t>(*n));
  }
  return out;
}

Status CheckOrcFooterTypes(std::string_view footer) {
  auto bad = [] { return Status::InvalidInput("the ORC footer is malformed"); };
  // Skips one field's value of wire type `wire`; for a length-delimited one, `*bytes` is it.
  auto value = [&](Cursor* in, uint64_t wire, uint64_t* number, std::string_view* bytes) {
    switch (wire) {
      case 0: return in->Varint(number);
      case 1: return in->Skip(8);
      case 2: return in->Varint(number) && in->Take(*number, bytes);
      case 5: return in->Skip(4);
      default: return false;
    }
  };
  Cursor in(footer);
  while (in.remaining() > 0) {
    uint64_t key = 0, number = 0;
    std::string_view bytes;
    if (!in.Varint(&key) || !value(&in, key & 7, &number, &bytes)) return bad();
    if (key != (4 << 3 | 2)) continue;  // Footer.types (4): one Type message each
    Cursor type(bytes);
    // Any kind field of DECIMAL counts: protobuf keeps an earlier kind when a later one is a value
    // the enum does not define (found by footer_fuzz), so "the last one" is not what liborc sees.
    bool decimal = false;
    uint64_t precision = 0;
    while (type.remaining() > 0) {
      uint64_t field = 0, v = 0;
      std::string_view ignored;
      if (!type.Varint(&field) || !value(&type, field & 7, &v, &ignored)) return bad();
      if (field == (1 << 3 | 0) && v == kOrcDecimalKind) decimal = true;
      if (field == (5 << 3 | 0)) precision = v;
    }
    // liborc reads precision as a uint32.
    if (decimal && static_cast<uint32_t>(precision) > kMaxDecimalPrecision) {
      return Status::InvalidInput("the ORC footer declares a decimal of precision " +
                                  std::to_string(static_cast<uint32_t>(precision)) + " (at most 38)");
    }
  }
  return Status::OK();
}

Result<FooterCost> CheckParquetFooter(arrow::io::RandomAccessFile* file, const FooterLimits& limits) {
  OG_ASSIGN_OR_RETURN(int64_t size, FileSize(file));
  if (size < 12) return Status::InvalidInput("the Parquet file is too short for a footer");
  OG_ASSIGN_OR_RETURN(std::string tail, ReadRange(file, size - 8, 8));
  FooterCost cost;
  OG_ASSIGN_OR_RETURN(cost.footer_bytes, ParquetMetadataLength(tail, size, limits));
  OG_ASSIGN_OR_RETURN(std::string metadata, ReadRange(file, size - 8 - cost.footer_bytes, cost.footer_bytes));
  OG_ASSIGN_OR_RETURN(cost.memory_bytes, EstimateParquetMetadataMemory(metadata));
  OG_RETURN_NOT_OK(OverMemory("Parquet", cost.memory_bytes, limits));
  return cost;
}

Result<FooterCost> CheckOrcFooter(arrow::io::RandomAccessFile* file, const FooterLimits& limits) {
  OG_ASSIGN_OR_RETURN(int64_t size, FileSize(file));
  const int64_t tail_bytes = std::min<int64_t>(size, 256);
  OG_ASSIGN_OR_RETURN(std::string tail, ReadRange(file, size - tail_bytes, tail_bytes));
  OG_ASSIGN_OR_RETURN(OrcPostscript ps, ParseOrcPostscript(tail, size, limits));
  FooterCost cost;
  cost.footer_bytes = ps.footer_bytes;
  OG_ASSIGN_OR_RETURN(std::string footer,
                      ReadRange(file, size - 1 - ps.postscript_bytes - ps.footer_bytes, ps.footer_bytes));
  OG_ASSIGN_OR_RETURN(cost.memory_bytes, EstimateOrcFooterMemory(footer, ps));
  OG_RETURN_NOT_OK(OverMemory("ORC", cost.memory_bytes, limits));
  OG_ASSIGN_OR_RETURN(std::string inflated, InflateOrcFooter(footer, ps));
  OG_RETURN_NOT_OK(CheckOrcFooterTypes(inflated));
  return cost;
}

}  // namespace openglue::storage
