#include "crawler/classify.h"

#include <algorithm>
#include <cctype>
#include <cstring>
#include <exception>
#include <memory>
#include <optional>

#include <arrow/adapters/orc/adapter.h>
#include <arrow/api.h>
#include <arrow/io/compressed.h>
#include <arrow/io/interfaces.h>
#include <arrow/io/memory.h>
#include <arrow/util/compression.h>
#include <parquet/arrow/schema.h>
#include <parquet/exception.h>
#include <parquet/file_reader.h>
#include <parquet/metadata.h>
#include <parquet/properties.h>

#include "common/json.h"
#include "common/strings.h"
#include "crawler/grok.h"
#include "storage/columnar_footer.h"

namespace openglue::crawler {

std::string FileClass::FormatKey() const {
  std::string key = classification + "/" + classifier;
  if (classification == "csv") {
    key += ":" + std::to_string(static_cast<int>(static_cast<unsigned char>(delimiter)));
    key += header ? ":h" : ":n";
  }
  return key;
}

FooterBudget::Lease::~Lease() {
  if (budget_ == nullptr) return;
  MutexLock lock(&budget_->mu_);
  budget_->free_ += bytes_;
  budget_->freed_.SignalAll();
}

FooterBudget::Lease FooterBudget::Reserve(int64_t bytes) {
  bytes = std::clamp<int64_t>(bytes, 0, total_);
  MutexLock lock(&mu_);
  while (free_ < bytes) freed_.Wait(&mu_);
  free_ -= bytes;
  return Lease(this, bytes);
}

int64_t FooterBudget::free_bytes() {
  MutexLock lock(&mu_);
  return free_;
}

namespace {

// An object read by ranges through the ObjectStore, for Arrow's Parquet and ORC readers (which
// read the footer, then only what they need).
class ObjectFile : public arrow::io::RandomAccessFile {
 public:
  ObjectFile(storage::ObjectStore* store, std::string bucket, std::string key, int64_t size)
      : store_(store), bucket_(std::move(bucket)), key_(std::move(key)), size_(size) {}

  arrow::Status Close() override {
    closed_ = true;
    return arrow::Status::OK();
  }
  bool closed() const override { return closed_; }
  arrow::Result<int64_t> Tell() const override { return position_; }
  arrow::Status Seek(int64_t position) override {
    if (position < 0 || position > size_) return arrow::Status::IOError("seek out of range");
    position_ = position;
    return arrow::Status::OK();
  }
  arrow::Result<int64_t> GetSize() override { return size_; }
  arrow::Result<int64_t> Read(int64_t nbytes, void* out) override {
    ARROW_ASSIGN_OR_RAISE(int64_t n, ReadAt(position_, nbytes, out));
    position_ += n;
    return n;
  }
  arrow::Result<std::shared_ptr<arrow::Buffer>> Read(int64_t nbytes) override {
    ARROW_ASSIGN_OR_RAISE(auto buffer, ReadAt(position_, nbytes));
    position_ += buffer->size();
    return buffer;
  }
  arrow::Result<int64_t> ReadAt(int64_t position, int64_t nbytes, void* out) override {
    ARROW_ASSIGN_OR_RAISE(auto buffer, ReadAt(position, nbytes));
    std::memcpy(out, buffer->data(), static_cast<size_t>(buffer->size()));
    return buffer->size();
  }
  arrow::Result<std::shared_ptr<arrow::Buffer>> ReadAt(int64_t position, int64_t nbytes) override {
    if (position < 0 || nbytes < 0 || position > size_) return arrow::Status::IOError("read out of range");
    nbytes = std::min(nbytes, size_ - position);
    Result<std::string> data = store_->Read(bucket_, key_, position, nbytes);
    if (!data.ok()) return arrow::Status::IOError(data.status().message());
    return arrow::Buffer::FromString(std::move(*data));
  }

 private:
  storage::ObjectStore* store_;
  std::string bucket_, key_;
  int64_t size_;
  int64_t position_ = 0;
  bool closed_ = false;
};

DataType FromArrow(const arrow::DataType& t) {
  using arrow::Type;
  switch (t.id()) {
    case Type::NA: return DataType::Of(DataType::Kind::kNull);
    case Type::BOOL: return DataType::Of(DataType::Kind::kBoolean);
    case Type::INT8: return DataType::Other("tinyint");
    case Type::INT16: case Type::UINT8: return DataType::Other("smallint");
    case Type::INT32: case Type::UINT16: return DataType::Of(DataType::Kind::kInt);
    case Type::INT64: case Type::UINT32: return DataType::Of(DataType::Kind::kBigint);
    case Type::UINT64: return DataType::Other("decimal(20,0)");
    case Type::HALF_FLOAT: case Type::FLOAT: return DataType::Other("float");
    case Type::DOUBLE: return DataType::Of(DataType::Kind::kDouble);
    case Type::STRING: case Type::LARGE_STRING: case Type::STRING_VIEW:
      return DataType::Of(DataType::Kind::kString);
    case Type::BINARY: case Type::LARGE_BINARY: case Type::FIXED_SIZE_BINARY: case Type::BINARY_VIEW:
      return DataType::Other("binary");
    case Type::DATE32: case Type::DATE64: return DataType::Other("date");
    case Type::TIMESTAMP: return DataType::Other("timestamp");
    case Type::DECIMAL128: case Type::DECIMAL256: {
      const auto& d = static_cast<const arrow::DecimalType&>(t);
      return DataType::Other("decimal(" + std::to_string(d.precision()) + "," + std::to_string(d.scale()) + ")");
    }
    case Type::LIST: case Type::LARGE_LIST: case Type::FIXED_SIZE_LIST: case Type::LIST_VIEW: {
      DataType out = DataType::Of(DataType::Kind::kArray);
      out.element.push_back(FromArrow(*t.field(0)->type()));
      return out;
    }
    case Type::STRUCT: {
      DataType out = DataType::Of(DataType::Kind::kStruct);
      for (const auto& f : t.fields()) out.fields.push_back(Field{f->name(), FromArrow(*f->type())});
      return out;
    }
    case Type::MAP: {
      const auto& m = static_cast<const arrow::MapType&>(t);
      return DataType::Other("map<" + FromArrow(*m.key_type()).ToHive() + "," +
                             FromArrow(*m.item_type()).ToHive() + ">");
    }
    case Type::DICTIONARY:
      return FromArrow(*static_cast<const arrow::DictionaryType&>(t).value_type());
    default: return DataType::Of(DataType::Kind::kString);
  }
}

Schema FromArrowSchema(const arrow::Schema& schema) {
  Schema out;
  for (const auto& f : schema.fields()) out.push_back(Column{f->name(), FromArrow(*f->type())});
  return out;
}

// The footer's cost, checked before Arrow reads it (storage/columnar_footer.h); an error names
// the format as Arrow's failures do.
Result<storage::FooterCost> CheckFooter(ObjectFile* file, bool parquet) {
  Result<storage::FooterCost> cost = parquet ? storage::CheckParquetFooter(file) : storage::CheckOrcFooter(file);
  if (cost.ok()) return cost;
  std::string message = (parquet ? "unreadable Parquet file: " : "unreadable ORC file: ") + cost.status().message();
  if (cost.status().code() == StatusCode::kInternal) return Status::Internal(std::move(message));
  return Status::InvalidInput(std::move(message));
}

Result<FileClass> ReadParquet(storage::ObjectStore* store, const std::string& bucket,
                              const storage::ObjectInfo& object, FooterBudget* budget) {
  try {
    auto file = std::make_shared<ObjectFile>(store, bucket, object.key, object.size);
    OG_ASSIGN_OR_RETURN(storage::FooterCost cost, CheckFooter(file.get(), true));
    std::optional<FooterBudget::Lease> lease;  // held until Arrow has decoded the footer
    if (budget != nullptr) lease.emplace(budget->Reserve(cost.memory_bytes));
    // Thrift's limits no larger than the footer: a declared string or container cannot be
    // larger than the bytes that hold it.
    parquet::ReaderProperties properties = parquet::default_reader_properties();
    const int32_t limit = static_cast<int32_t>(std::min<int64_t>(cost.footer_bytes, parquet::kDefaultThriftStringSizeLimit));
    properties.set_thrift_string_size_limit(limit);
    properties.set_thrift_container_size_limit(std::min(limit, parquet::kDefaultThriftContainerSizeLimit));
    std::unique_ptr<parquet::ParquetFileReader> reader = parquet::ParquetFileReader::Open(file, properties);
    std::shared_ptr<parquet::FileMetaData> metadata = reader->metadata();
    std::shared_ptr<arrow::Schema> schema;
    arrow::Status st = parquet::arrow::FromParquetSchema(metadata->schema(), &schema);
    if (!st.ok()) return Status::InvalidInput("unreadable Parquet schema: " + st.message());
    FileClass out;
    out.classification = "parquet";
    out.schema = FromArrowSchema(*schema);
    out.records = metadata->num_rows();
    return out;
  } catch (const std::exception& e) {
    return Status::InvalidInput(std::string("unreadable Parquet file: ") + SanitizeUtf8(e.what()));
  }
}

Result<FileClass> ReadOrc(storage::ObjectStore* store, const std::string& bucket,
                          const storage::ObjectInfo& object, FooterBudget* budget) {
  try {
    auto file = std::make_shared<ObjectFile>(store, bucket, object.key, object.size);
    OG_ASSIGN_OR_RETURN(storage::FooterCost cost, CheckFooter(file.get(), false));
    std::optional<FooterBudget::Lease> lease;  // held until Arrow has decoded the footer
    if (budget != nullptr) lease.emplace(budget->Reserve(cost.memory_bytes));
    auto reader = arrow::adapters::orc::ORCFileReader::Open(file, arrow::default_memory_pool());
    if (!reader.ok()) return Status::InvalidInput("unreadable ORC file: " + reader.status().message());
    auto schema = (*reader)->ReadSchema();
    if (!schema.ok()) return Status::InvalidInput("unreadable ORC schema: " + schema.status().message());
    FileClass out;
    out.classification = "orc";
    out.schema = FromArrowSchema(**schema);
    out.records = (*reader)->NumberOfRows();
    return out;
  } catch (const std::exception& e) {
    return Status::InvalidInput(std::string("unreadable ORC file: ") + SanitizeUtf8(e.what()));
  }
}

// ---- Avro: the schema from the container file's header (avro.schema), the record count from
// the data blocks' headers. No Arrow: the header is a few varints and strings.

// Reads a zigzag varint long at `*pos` of `data`; false when it runs past the end or is too long.
bool AvroLong(const std::string& data, size_t* pos, int64_t* out) {
  uint64_t value = 0;
  for (int shift = 0; shift < 64; shift += 7) {
    if (*pos >= data.size()) return false;
    uint8_t b = static_cast<uint8_t>(data[(*pos)++]);
    value |= static_cast<uint64_t>(b & 0x7f) << shift;
    if (!(b & 0x80)) {
      *out = static_cast<int64_t>(value >> 1) ^ -static_cast<int64_t>(value & 1);
      return true;
    }
  }
  return false;
}

DataType FromAvro(const Json& t, int depth) {
  if (depth > 32) return DataType::Of(DataType::Kind::kString);
  if (t.is_array()) {  // a union: [null, T] is T; anything wider has no Hive type here
    std::vector<const Json*> branches;
    for (const Json& b : t)
      if (!(b.is_string() && b.get<std::string>() == "null")) branches.push_back(&b);
    return branches.size() == 1 ? FromAvro(*branches[0], depth + 1) : DataType::Of(DataType::Kind::kString);
  }
  std::string type = t.is_string() ? t.get<std::string>() : t.is_object() ? t.value("type", "") : "";
  std::string logical = t.is_object() ? t.value("logicalType", "") : "";
  if (logical == "date") return DataType::Other("date");
  if (logical == "timestamp-millis" || logical == "timestamp-micros") return DataType::Other("timestamp");
  if (logical == "decimal" && t.is_object())
    return DataType::Other("decimal(" + std::to_string(t.value("precision", 10)) + "," +
                           std::to_string(t.value("scale", 0)) + ")");
  if (type == "boolean") return DataType::Of(DataType::Kind::kBoolean);
  if (type == "int") return DataType::Of(DataType::Kind::kInt);
  if (type == "long") return DataType::Of(DataType::Kind::kBigint);
  if (type == "float") return DataType::Other("float");
  if (type == "double") return DataType::Of(DataType::Kind::kDouble);
  if (type == "bytes" || type == "fixed") return DataType::Other("binary");
  if (type == "array" && t.is_object()) {
    DataType out = DataType::Of(DataType::Kind::kArray);
    out.element.push_back(FromAvro(t.value("items", Json("string")), depth + 1));
    return out;
  }
  if (type == "map" && t.is_object())
    return DataType::Other("map<string," + FromAvro(t.value("values", Json("string")), depth + 1).ToHive() + ">");
  if (type == "record" && t.is_object()) {
    DataType out = DataType::Of(DataType::Kind::kStruct);
    for (const Json& f : t.value("fields", Json::array()))
      if (f.is_object()) out.fields.push_back(Field{f.value("name", ""), FromAvro(f.value("type", Json("string")), depth + 1)});
    return out;
  }
  return DataType::Of(DataType::Kind::kString);  // string, enum, null, unknown
}

Result<FileClass> ReadAvro(storage::ObjectStore* store, const std::string& bucket,
                           const storage::ObjectInfo& object) {
  OG_ASSIGN_OR_RETURN(std::string head, store->Read(bucket, object.key, 0, kSampleBytes));
  auto bad = [](const std::string& why) { return Status::InvalidInput("unreadable Avro file: " + why); };
  size_t pos = 4;
  std::string schema_text;
  for (int blocks = 0;; ++blocks) {
    int64_t count = 0;
    if (blocks > 1000 || !AvroLong(head, &pos, &count)) return bad("truncated header");
    if (count == 0) break;
    if (count < 0) {
      int64_t ignored = 0;
      count = -count;
      if (!AvroLong(head, &pos, &ignored)) return bad("truncated header");
    }
    for (int64_t i = 0; i < count; ++i) {
      int64_t klen = 0, vlen = 0;
      if (!AvroLong(head, &pos, &klen) || klen < 0 || pos + static_cast<size_t>(klen) > head.size())
        return bad("truncated header");
      std::string key = head.substr(pos, static_cast<size_t>(klen));
      pos += static_cast<size_t>(klen);
      if (!AvroLong(head, &pos, &vlen) || vlen < 0 || pos + static_cast<size_t>(vlen) > head.size())
        return bad("truncated header");
      if (key == "avro.schema") schema_text = head.substr(pos, static_cast<size_t>(vlen));
      pos += static_cast<size_t>(vlen);
    }
  }
  Json schema = ParseJson(schema_text);
  if (schema.is_discarded() || !schema.is_object() || schema.value("type", "") != "record")
    return bad("its avro.schema is not a record schema");
  FileClass out;
  out.classification = "avro";
  for (Field& f : FromAvro(schema, 0).fields) out.schema.push_back(Column{f.name, f.type});
  // Records: each data block starts with its object count and byte size (after the 16-byte sync).
  int64_t offset = static_cast<int64_t>(pos) + 16, records = 0;
  for (int blocks = 0; offset < object.size && blocks < 100000; ++blocks) {
    OG_ASSIGN_OR_RETURN(std::string block, store->Read(bucket, object.key, offset, 20));
    size_t p = 0;
    int64_t count = 0, size = 0;
    if (!AvroLong(block, &p, &count) || !AvroLong(block, &p, &size) || count < 0 || size < 0)
      return bad("truncated data block");
    records += count;
    offset += static_cast<int64_t>(p) + size + 16;
  }
  out.records = records;
  return out;
}

// Up to kSampleBytes of the decompressed content of a gzip or bzip2 object; `*complete` when
// the whole content fit.
Result<std::string> Decompress(const std::string& head_or_all, arrow::Compression::type codec_type,
                               bool* complete) {
  try {
    auto codec = arrow::util::Codec::Create(codec_type);
    if (!codec.ok()) return Status::Internal("no codec: " + codec.status().message());
    auto raw = std::make_shared<arrow::io::BufferReader>(arrow::Buffer::FromString(head_or_all));
    auto stream = arrow::io::CompressedInputStream::Make(codec->get(), raw);
    if (!stream.ok()) return Status::InvalidInput("cannot decompress: " + stream.status().message());
    std::string out;
    *complete = false;
    while (static_cast<int64_t>(out.size()) < kSampleBytes) {
      auto chunk = (*stream)->Read(std::min<int64_t>(65536, kSampleBytes - static_cast<int64_t>(out.size())));
      if (!chunk.ok()) {
        // A compressed prefix ends mid-stream: what came out before is the sample.
        if (out.empty()) return Status::InvalidInput("cannot decompress: " + chunk.status().message());
        return out;
      }
      if ((*chunk)->size() == 0) {
        *complete = true;
        break;
      }
      out.append(reinterpret_cast<const char*>((*chunk)->data()), static_cast<size_t>((*chunk)->size()));
    }
    return out;
  } catch (const std::exception& e) {
    return Status::InvalidInput(std::string("cannot decompress: ") + SanitizeUtf8(e.what()));
  }
}

}  // namespace

Result<CustomClassifier> CustomClassifier::FromDocument(const std::string& name, const std::string& doc_text) {
  Json doc = ParseJson(doc_text);
  if (!doc.is_object()) return Status::Internal("stored classifier " + name + " is unreadable");
  CustomClassifier out;
  out.name = name;
  if (doc.contains("CsvClassifier")) {
    const Json& c = doc["CsvClassifier"];
    out.kind = Kind::kCsv;
    std::string d = c.value("Delimiter", ""), q = c.value("QuoteSymbol", "");
    if (!d.empty()) out.csv.delimiter = d[0];
    if (!q.empty()) out.csv.quote = q[0];
    std::string header = c.value("ContainsHeader", "UNKNOWN");
    out.csv.header = header == "PRESENT"  ? CsvHints::Header::kPresent
                     : header == "ABSENT" ? CsvHints::Header::kAbsent
                                          : CsvHints::Header::kDetect;
    for (const Json& h : c.value("Header", Json::array()))
      if (h.is_string()) out.csv.names.push_back(h.get<std::string>());
    out.csv.allow_single_column = c.value("AllowSingleColumn", false);
    return out;
  }
  if (doc.contains("JsonClassifier")) {
    out.kind = Kind::kJson;
    out.json_path = doc["JsonClassifier"].value("JsonPath", "$");
    return out;
  }
  if (doc.contains("GrokClassifier")) {
    const Json& g = doc["GrokClassifier"];
    out.kind = Kind::kGrok;
    out.classification = g.value("Classification", "grok");
    out.grok_pattern = g.value("GrokPattern", "");
    out.custom_patterns = g.value("CustomPatterns", "");
    OG_ASSIGN_OR_RETURN(GrokPattern pattern, GrokPattern::Make(out.grok_pattern, out.custom_patterns));
    out.grok = std::make_shared<const GrokPattern>(std::move(pattern));
    return out;
  }
  if (doc.contains("XMLClassifier")) {
    out.kind = Kind::kXml;
    out.classification = doc["XMLClassifier"].value("Classification", "xml");
    out.row_tag = doc["XMLClassifier"].value("RowTag", "");
    return out;
  }
  return Status::InvalidInput("unknown classifier kind");
}

namespace {

// What a text classifier found, into `out`.
void TakeSample(TextSample text, FileClass* out) {
  out->classification = std::move(text.classification);
  out->schema = std::move(text.schema);
  out->delimiter = text.delimiter;
  out->header = text.header;
  out->quoted = text.quoted;
  out->records = text.records;
  out->records_sample_bytes = text.sample_bytes;
}

// The row tag Glue's built-in XML classifier reads: the name of the first element inside the
// document's root element, past the declaration, comments and a DOCTYPE; "" when there is none.
std::string GuessXmlRowTag(std::string_view text) {
  auto name_char = [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '-' || c == '.' || c == ':';
  };
  int depth = 0;
  for (size_t i = 0; i < text.size();) {
    size_t lt = text.find('<', i);
    if (lt == std::string_view::npos || lt + 1 >= text.size()) return "";
    if (text.compare(lt, 4, "<!--") == 0) {
      size_t end = text.find("-->", lt + 4);
      if (end == std::string_view::npos) return "";
      i = end + 3;
      continue;
    }
    size_t gt = text.find('>', lt);
    if (gt == std::string_view::npos) return "";
    if (text[lt + 1] == '?' || text[lt + 1] == '!') {  // declaration, DOCTYPE
      i = gt + 1;
      continue;
    }
    if (text[lt + 1] == '/') return "";  // the root closed before any child
    size_t end = lt + 1;
    while (end < text.size() && name_char(text[end])) ++end;
    if (end == lt + 1) return "";
    if (depth == 1) return std::string(text.substr(lt + 1, end - lt - 1));
    if (text[gt - 1] == '/') return "";  // a self-closing root holds no rows
    ++depth;
    i = gt + 1;
  }
  return "";
}

// A custom classifier applied to a text sample.
Result<FileClass> ApplyCustom(const CustomClassifier& c, const std::string& sample, bool complete) {
  FileClass out;
  Result<TextSample> text = Status::InvalidInput("unclassified");
  switch (c.kind) {
    case CustomClassifier::Kind::kCsv: text = InferCsv(sample, complete, c.csv); break;
    case CustomClassifier::Kind::kJson:
      text = InferJsonPath(sample, complete, c.json_path);
      out.parameters["jsonPath"] = c.json_path;
      break;
    case CustomClassifier::Kind::kGrok:
      text = InferGrok(sample, complete, *c.grok, c.classification);
      out.serde = "com.amazonaws.glue.serde.GrokSerDe";
      out.serde_parameters["input.format"] = c.grok_pattern;
      if (!c.custom_patterns.empty()) out.serde_parameters["input.grokCustomPatterns"] = c.custom_patterns;
      out.parameters["grokPattern"] = c.grok_pattern;
      break;
    case CustomClassifier::Kind::kXml:
      text = InferXml(sample, complete, c.row_tag, c.classification);
      out.parameters["rowTag"] = c.row_tag;
      out.serde_parameters["rowTag"] = c.row_tag;
      break;
  }
  OG_RETURN_NOT_OK(text.status());
  TakeSample(std::move(*text), &out);
  out.classifier = c.name;
  return out;
}

}  // namespace

Result<FileClass> ClassifyObject(storage::ObjectStore* store, const std::string& bucket,
                                 const storage::ObjectInfo& object, const std::vector<CustomClassifier>& custom,
                                 FooterBudget* budget) {
  if (object.size == 0) return Status::InvalidInput("empty file");
  OG_ASSIGN_OR_RETURN(std::string head, store->Read(bucket, object.key, 0, 4));
  if (head.size() == 4 && head == "PAR1") return ReadParquet(store, bucket, object, budget);
  if (head.size() >= 3 && head.compare(0, 3, "ORC") == 0) return ReadOrc(store, bucket, object, budget);
  if (head.size() == 4 && head == std::string("Obj\x01", 4)) return ReadAvro(store, bucket, object);
  std::string compression;
  arrow::Compression::type codec = arrow::Compression::UNCOMPRESSED;
  if (head.size() >= 2 && static_cast<unsigned char>(head[0]) == 0x1f &&
      static_cast<unsigned char>(head[1]) == 0x8b) {
    compression = "gzip";
    codec = arrow::Compression::GZIP;
  } else if (head.size() >= 3 && head.compare(0, 3, "BZh") == 0) {
    compression = "bzip2";
    codec = arrow::Compression::BZ2;
  }
  std::string sample;
  bool complete = false;
  if (codec != arrow::Compression::UNCOMPRESSED) {
    // Compressed text: a prefix of the object decompresses to a prefix of the content. Text
    // compresses at least 2:1, so a quarter of the sample size in compressed bytes is plenty.
    int64_t want = std::min<int64_t>(object.size, kSampleBytes);
    OG_ASSIGN_OR_RETURN(std::string raw, store->Read(bucket, object.key, 0, want));
    OG_ASSIGN_OR_RETURN(sample, Decompress(raw, codec, &complete));
    if (want < object.size) complete = false;
  } else {
    OG_ASSIGN_OR_RETURN(sample, store->Read(bucket, object.key, 0, kSampleBytes));
    complete = static_cast<int64_t>(sample.size()) >= object.size;
  }
  size_t first = sample.find_first_not_of(" \t\r\n");
  if (first == std::string::npos) return Status::InvalidInput("empty or blank file");
  Result<FileClass> found = Status::InvalidInput("unclassified");
  for (const CustomClassifier& c : custom) {
    found = ApplyCustom(c, sample, complete);
    if (found.ok()) break;
  }
  if (!found.ok()) {
    if (sample[first] == '<') {
      // Built-in XML: each element inside the root is a record (Glue's built-in classifier).
      std::string row_tag = GuessXmlRowTag(sample);
      if (row_tag.empty()) return Status::InvalidInput("an XML document with no element inside its root");
      OG_ASSIGN_OR_RETURN(TextSample xml, InferXml(sample, complete, row_tag, "xml"));
      FileClass built_in;
      TakeSample(std::move(xml), &built_in);
      built_in.parameters["rowTag"] = row_tag;
      built_in.serde_parameters["rowTag"] = row_tag;
      found = std::move(built_in);
    }
  }
  if (!found.ok()) {
    Result<TextSample> text = Status::InvalidInput("unclassified");
    if (sample[first] == '{' || sample[first] == '[') text = InferJson(sample, complete);
    if (!text.ok()) {
      Result<TextSample> csv = InferCsv(sample, complete);
      if (!csv.ok() && sample[first] != '{' && sample[first] != '[') return csv.status();
      if (!csv.ok()) return text.status();
      text = std::move(csv);
    }
    FileClass built_in;
    TakeSample(std::move(*text), &built_in);
    found = std::move(built_in);
  }
  FileClass out = std::move(*found);
  out.compression = compression;
  // Uncompressed: scale the sample's records to the object's size. Compressed and cut: the
  // sample's count is a lower bound (the rest is not read).
  if (!complete && compression.empty() && out.records_sample_bytes > 0)
    out.records = static_cast<int64_t>(static_cast<double>(out.records) * static_cast<double>(object.size) /
                                       static_cast<double>(out.records_sample_bytes));
  return out;
}

}  // namespace openglue::crawler
