#include "engine/writer.h"

#include <algorithm>
#include <atomic>
#include <charconv>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <functional>
#include <mutex>
#include <thread>
#include <unordered_map>
#include <utility>

#include <arrow/adapters/orc/adapter.h>
#include <arrow/api.h>
#include <arrow/compute/api_vector.h>
#include <arrow/csv/writer.h>
#include <arrow/ipc/writer.h>
#include <arrow/filesystem/filesystem.h>
#include <arrow/io/compressed.h>
#include <arrow/util/byte_size.h>
#include <arrow/util/compression.h>
#include <parquet/arrow/writer.h>
#include <parquet/properties.h>

#include "common/strings.h"
#include "common/thread_annotations.h"
#include "engine/glue_cast.h"
#include "engine/scan.h"

namespace openglue::engine {
namespace {

using storage::ResolvedPath;
using BatchPtr = std::shared_ptr<arrow::RecordBatch>;

constexpr char kTempPrefix[] = ".og-tmp.";
constexpr char kDefaultPartition[] = "__HIVE_DEFAULT_PARTITION__";

enum class Format { kCsv, kJson, kParquet, kOrc };

struct FormatSpec {
  Format format;
  std::string extension;  // "csv", "json", "parquet", "orc"
  std::string infix;      // parquet/orc codec name in the file name ("snappy")
  std::string suffix;     // csv/json compression suffix (".gz")
  arrow::Compression::type codec = arrow::Compression::UNCOMPRESSED;
  char separator = ',';
  int quote = '"';        // -1: never quote
  bool header = true;
};

std::string OptionOr(const std::map<std::string, std::string>& options, const std::string& key,
                     const std::string& fallback) {
  auto it = options.find(key);
  return it == options.end() ? fallback : it->second;
}

Result<FormatSpec> ParseFormat(std::string_view format_name,
                               const std::map<std::string, std::string>& options) {
  FormatSpec spec;
  const std::string format = ToLower(format_name);
  const std::string compression = ToLower(OptionOr(options, "compression", ""));
  if (format == "csv" || format == "json") {
    spec.format = format == "csv" ? Format::kCsv : Format::kJson;
    spec.extension = format;
    if (compression.empty() || compression == "none" || compression == "uncompressed") {
    } else if (compression == "gzip" || compression == "gz") {
      spec.codec = arrow::Compression::GZIP; spec.suffix = ".gz";
    } else if (compression == "bzip2" || compression == "bz2") {
      spec.codec = arrow::Compression::BZ2; spec.suffix = ".bz2";
    } else if (compression == "zstd") {
      spec.codec = arrow::Compression::ZSTD; spec.suffix = ".zst";
    } else if (compression == "lz4") {
      spec.codec = arrow::Compression::LZ4_FRAME; spec.suffix = ".lz4";
    } else {
      return Status::InvalidInput("compression \"" + TruncateUtf8(compression, 100) +
                                  "\" is not supported for " + format +
                                  " (gzip, bzip2, zstd, lz4 or none)");
    }
    if (format == "csv") {
      std::string sep = OptionOr(options, "separator", ",");
      if (sep == "\\t") sep = "\t";
      if (sep.size() != 1 || sep[0] == '\n' || sep[0] == '\r')
        return Status::InvalidInput("separator must be one character, got \"" + TruncateUtf8(sep, 20) + "\"");
      spec.separator = sep[0];
      std::string quote = OptionOr(options, "quoteChar", "\"");
      if (quote == "-1") spec.quote = -1;
      else if (quote.size() == 1 && quote[0] != spec.separator && quote[0] != '\n') spec.quote = static_cast<unsigned char>(quote[0]);
      else return Status::InvalidInput("quoteChar must be one character or -1, got \"" + TruncateUtf8(quote, 20) + "\"");
      spec.header = ToLower(OptionOr(options, "writeHeader", "true")) != "false";
    }
  } else if (format == "parquet" || format == "glueparquet") {
    spec.format = Format::kParquet;
    spec.extension = "parquet";
    const std::string c = compression.empty() ? "snappy" : compression;
    if (c == "snappy") { spec.codec = arrow::Compression::SNAPPY; spec.infix = "snappy"; }
    else if (c == "gzip" || c == "gz") { spec.codec = arrow::Compression::GZIP; spec.infix = "gz"; }
    else if (c == "zstd") { spec.codec = arrow::Compression::ZSTD; spec.infix = "zstd"; }
    else if (c == "lz4") { spec.codec = arrow::Compression::LZ4; spec.infix = "lz4"; }
    else if (c == "brotli") { spec.codec = arrow::Compression::BROTLI; spec.infix = "br"; }
    else if (c == "uncompressed" || c == "none") { spec.codec = arrow::Compression::UNCOMPRESSED; }
    else return Status::InvalidInput("parquet compression \"" + TruncateUtf8(c, 100) +
                                     "\" is not supported (snappy, gzip, zstd, lz4, brotli, uncompressed)");
  } else if (format == "orc") {
    spec.format = Format::kOrc;
    spec.extension = "orc";
    const std::string c = compression.empty() ? "snappy" : compression;
    if (c == "snappy") { spec.codec = arrow::Compression::SNAPPY; spec.infix = "snappy"; }
    else if (c == "zlib" || c == "gzip") { spec.codec = arrow::Compression::GZIP; spec.infix = "zlib"; }
    else if (c == "zstd") { spec.codec = arrow::Compression::ZSTD; spec.infix = "zstd"; }
    else if (c == "lz4") { spec.codec = arrow::Compression::LZ4_FRAME; spec.infix = "lz4"; }
    else if (c == "none" || c == "uncompressed") { spec.codec = arrow::Compression::UNCOMPRESSED; }
    else return Status::InvalidInput("orc compression \"" + TruncateUtf8(c, 100) +
                                     "\" is not supported (snappy, zlib, zstd, lz4, none)");
  } else {
    return Status::InvalidInput("format " + TruncateUtf8(format_name, 100) +
                                " is not supported for writing by the embedded engine "
                                "(csv, json, parquet, glueparquet, orc)");
  }
  if (spec.codec != arrow::Compression::UNCOMPRESSED && !arrow::util::Codec::IsAvailable(spec.codec))
    return Status::InvalidInput("compression " + compression + " is not available in this build");
  return spec;
}

Status IoError(const std::string& uri, const std::string& what, const arrow::Status& status) {
  return Status::Internal("cannot " + what + " " + uri + ": " + status.message());
}

// ---- per-format file sinks ------------------------------------------------------------------

// The column types a format stores for the stream's types.
Result<std::shared_ptr<arrow::Field>> FileField(const std::shared_ptr<arrow::Field>& field, Format format) {
  const auto& type = field->type();
  if (format == Format::kCsv) {
    const auto id = type->id();
    if (arrow::is_nested(id) || id == arrow::Type::TIMESTAMP || id == arrow::Type::FLOAT ||
        id == arrow::Type::DOUBLE || id == arrow::Type::HALF_FLOAT || id == arrow::Type::DATE64 ||
        id == arrow::Type::DICTIONARY)
      return field->WithType(arrow::utf8())->WithNullable(true);
    return field;
  }
  if (format == Format::kJson) return field;
  return field->WithType(UnionsToStructsType(type));
}

Result<BatchPtr> ToFileBatch(const BatchPtr& batch, const std::shared_ptr<arrow::Schema>& schema) {
  std::vector<std::shared_ptr<arrow::Array>> columns;
  for (int c = 0; c < batch->num_columns(); ++c) {
    const auto& column = batch->column(c);
    const auto& want = schema->field(c)->type();
    if (column->type()->Equals(*want)) { columns.push_back(column); continue; }
    if (want->id() == arrow::Type::STRING && column->type_id() != arrow::Type::STRING) {
      OG_ASSIGN_OR_RETURN(auto text, GlueCast(column, arrow::utf8()));
      columns.push_back(text);
    } else {
      OG_ASSIGN_OR_RETURN(auto converted, UnionsToStructs(column));
      columns.push_back(converted);
    }
  }
  return arrow::RecordBatch::Make(schema, batch->num_rows(), columns);
}

class FileSink {
 public:
  virtual ~FileSink() = default;
  virtual arrow::Status Write(const BatchPtr& batch) = 0;
  virtual arrow::Status Finish() = 0;  // completes the file and closes the stream
  virtual arrow::Status CutRowGroup() { return arrow::Status::OK(); }
};

// The raw stream (maybe compressed) of a csv/json file.
class TextSink : public FileSink {
 public:
  ~TextSink() override { out_.reset(); raw_.reset(); }
  TextSink(std::shared_ptr<arrow::io::OutputStream> raw, std::shared_ptr<arrow::io::OutputStream> out)
      : raw_(std::move(raw)), out_(std::move(out)) {}
  arrow::Status Finish() override {
    ARROW_RETURN_NOT_OK(out_->Close());
    if (raw_ != out_) ARROW_RETURN_NOT_OK(raw_->Close());
    return arrow::Status::OK();
  }
  std::unique_ptr<arrow::util::Codec> codec_;  // used by out_ when compressed

 protected:
  std::shared_ptr<arrow::io::OutputStream> raw_, out_;
};

class JsonSink : public TextSink {
 public:
  using TextSink::TextSink;
  arrow::Status Write(const BatchPtr& batch) override {
    buffer_.clear();
    const int64_t rows = batch->num_rows();
    std::vector<std::string> keys;
    for (const auto& f : batch->schema()->fields()) {
      std::string key;
      AppendJsonValue(*arrow::MakeArrayFromScalar(arrow::StringScalar(f->name()), 1).ValueOrDie(), 0, &key);
      keys.push_back(key + ":");
    }
    for (int64_t r = 0; r < rows; ++r) {
      buffer_.push_back('{');
      bool first = true;
      for (int c = 0; c < batch->num_columns(); ++c) {
        const auto& column = *batch->column(c);
        if (column.IsNull(r)) continue;  // Spark and Glue omit null fields
        if (!first) buffer_.push_back(',');
        first = false;
        buffer_.append(keys[static_cast<size_t>(c)]);
        AppendJsonValue(column, r, &buffer_);
      }
      buffer_.append("}\n");
      if (buffer_.size() > (4 << 20)) {
        ARROW_RETURN_NOT_OK(out_->Write(buffer_.data(), static_cast<int64_t>(buffer_.size())));
        buffer_.clear();
      }
    }
    return out_->Write(buffer_.data(), static_cast<int64_t>(buffer_.size()));
  }

 private:
  std::string buffer_;
};

class ArrowCsvSink : public TextSink {
 public:
  ArrowCsvSink(std::shared_ptr<arrow::io::OutputStream> raw, std::shared_ptr<arrow::io::OutputStream> out,
               std::shared_ptr<arrow::ipc::RecordBatchWriter> writer)
      : TextSink(std::move(raw), std::move(out)), writer_(std::move(writer)) {}
  arrow::Status Write(const BatchPtr& batch) override { return writer_->WriteRecordBatch(*batch); }
  arrow::Status Finish() override {
    ARROW_RETURN_NOT_OK(writer_->Close());
    return TextSink::Finish();
  }

 private:
  std::shared_ptr<arrow::ipc::RecordBatchWriter> writer_;
};

// CSV with a quote character other than '"' (Arrow's writer only knows '"').
class CustomCsvSink : public TextSink {
 public:
  CustomCsvSink(std::shared_ptr<arrow::io::OutputStream> raw, std::shared_ptr<arrow::io::OutputStream> out,
                char separator, char quote, bool header, std::shared_ptr<arrow::Schema> schema)
      : TextSink(std::move(raw), std::move(out)), separator_(separator), quote_(quote),
        header_(header), schema_(std::move(schema)) {}
  arrow::Status Write(const BatchPtr& batch) override {
    std::string buffer;
    if (header_) {
      for (int c = 0; c < schema_->num_fields(); ++c) {
        if (c) buffer.push_back(separator_);
        AppendField(schema_->field(c)->name(), &buffer);
      }
      buffer.push_back('\n');
      header_ = false;
    }
    std::vector<std::shared_ptr<arrow::StringArray>> text;
    for (const auto& column : batch->columns()) {
      auto cast = GlueCast(column, arrow::utf8());
      if (!cast.ok()) return arrow::Status::Invalid(cast.status().message());
      text.push_back(std::static_pointer_cast<arrow::StringArray>(*cast));
    }
    for (int64_t r = 0; r < batch->num_rows(); ++r) {
      for (size_t c = 0; c < text.size(); ++c) {
        if (c) buffer.push_back(separator_);
        if (text[c]->IsValid(r)) AppendField(text[c]->GetView(r), &buffer);
      }
      buffer.push_back('\n');
    }
    return out_->Write(buffer.data(), static_cast<int64_t>(buffer.size()));
  }

 private:
  void AppendField(std::string_view value, std::string* out) const {
    bool needs = value.find_first_of(std::string{separator_, quote_, '\n', '\r'}) != std::string_view::npos;
    if (!needs) { out->append(value); return; }
    out->push_back(quote_);
    for (char ch : value) {
      if (ch == quote_) out->push_back(quote_);
      out->push_back(ch);
    }
    out->push_back(quote_);
  }
  char separator_, quote_;
  bool header_;
  std::shared_ptr<arrow::Schema> schema_;
};

class ParquetSink : public FileSink {
 public:
  ParquetSink(std::shared_ptr<arrow::io::OutputStream> out, std::unique_ptr<parquet::arrow::FileWriter> writer)
      : out_(std::move(out)), writer_(std::move(writer)) {}
  // Batches are kept as Arrow data until a row group is cut: a Parquet column writer holds
  // megabytes of page and dictionary buffers while its row group is open, so one row group per
  // open file would cost (files x columns x MBs); this way only the row group being encoded does.
  arrow::Status Write(const BatchPtr& batch) override {
    pending_.push_back(batch);
    return arrow::Status::OK();
  }
  arrow::Status CutRowGroup() override {
    if (pending_.empty()) return arrow::Status::OK();
    ARROW_ASSIGN_OR_RAISE(auto table, arrow::Table::FromRecordBatches(pending_[0]->schema(), pending_));
    pending_.clear();
    ARROW_RETURN_NOT_OK(writer_->WriteTable(*table, std::max<int64_t>(1, table->num_rows())));
    return arrow::Status::OK();
  }
  arrow::Status Finish() override {
    ARROW_RETURN_NOT_OK(CutRowGroup());
    ARROW_RETURN_NOT_OK(writer_->Close());
    return out_->Close();
  }

 private:
  std::shared_ptr<arrow::io::OutputStream> out_;
  std::unique_ptr<parquet::arrow::FileWriter> writer_;
  std::vector<BatchPtr> pending_;
};

class OrcSink : public FileSink {
 public:
  OrcSink(std::shared_ptr<arrow::io::OutputStream> out, std::unique_ptr<arrow::adapters::orc::ORCFileWriter> writer)
      : out_(std::move(out)), writer_(std::move(writer)) {}
  arrow::Status Write(const BatchPtr& batch) override { return writer_->Write(*batch); }
  arrow::Status Finish() override {
    ARROW_RETURN_NOT_OK(writer_->Close());
    return out_->Close();
  }

 private:
  std::shared_ptr<arrow::io::OutputStream> out_;
  std::unique_ptr<arrow::adapters::orc::ORCFileWriter> writer_;
};

arrow::Result<std::unique_ptr<FileSink>> OpenSink(const FormatSpec& spec,
                                                  std::shared_ptr<arrow::io::OutputStream> raw,
                                                  const std::shared_ptr<arrow::Schema>& schema) {
  switch (spec.format) {
    case Format::kParquet: {
      parquet::WriterProperties::Builder builder;
      builder.compression(spec.codec);
      builder.max_row_group_length(1 << 20);
      // Columns of a row group are encoded on Arrow's CPU pool (our tasks run on threads of
      // their own, so waiting for them there cannot deadlock).
      auto arrow_props = parquet::ArrowWriterProperties::Builder().store_schema()->set_use_threads(true)->build();
      ARROW_ASSIGN_OR_RAISE(auto writer, parquet::arrow::FileWriter::Open(
                                             *schema, arrow::default_memory_pool(), raw,
                                             builder.build(), arrow_props));
      return std::make_unique<ParquetSink>(raw, std::move(writer));
    }
    case Format::kOrc: {
      arrow::adapters::orc::WriteOptions options;
      options.compression = spec.codec;
      ARROW_ASSIGN_OR_RAISE(auto writer, arrow::adapters::orc::ORCFileWriter::Open(raw.get(), options));
      return std::make_unique<OrcSink>(raw, std::move(writer));
    }
    case Format::kCsv:
    case Format::kJson: {
      std::shared_ptr<arrow::io::OutputStream> out = raw;
      std::unique_ptr<arrow::util::Codec> codec_holder;
      if (spec.codec != arrow::Compression::UNCOMPRESSED) {
        ARROW_ASSIGN_OR_RAISE(auto codec, arrow::util::Codec::Create(spec.codec));
        ARROW_ASSIGN_OR_RAISE(out, arrow::io::CompressedOutputStream::Make(codec.get(), raw));
        codec_holder = std::move(codec);
      }
      std::unique_ptr<TextSink> sink;
      if (spec.format == Format::kJson) {
        sink = std::make_unique<JsonSink>(raw, out);
      } else if (spec.quote == '"' || spec.quote == -1) {
        auto options = arrow::csv::WriteOptions::Defaults();
        options.include_header = spec.header;
        options.delimiter = spec.separator;
        options.batch_size = 4096;
        options.quoting_style = spec.quote == -1 ? arrow::csv::QuotingStyle::None : arrow::csv::QuotingStyle::Needed;
        ARROW_ASSIGN_OR_RAISE(auto writer, arrow::csv::MakeCSVWriter(out, schema, options));
        sink = std::make_unique<ArrowCsvSink>(raw, out, writer);
      } else {
        sink = std::make_unique<CustomCsvSink>(raw, out, spec.separator, static_cast<char>(spec.quote),
                                               spec.header, schema);
      }
      sink->codec_ = std::move(codec_holder);
      return sink;
    }
  }
  return arrow::Status::Invalid("unknown format");
}

// A fixed pool of worker threads running void() tasks; Wait() blocks until all submitted tasks
// have run.
class TaskPool {
 public:
  explicit TaskPool(int threads) {
    for (int i = 0; i < threads; ++i) workers_.emplace_back([this] { Run(); });
  }
  ~TaskPool() {
    {
      MutexLock lock(&mutex_);
      stopping_ = true;
    }
    wake_.SignalAll();
    for (auto& t : workers_) t.join();
  }
  void Submit(std::function<void()> task) EXCLUDES(mutex_) {
    {
      MutexLock lock(&mutex_);
      queue_.push_back(std::move(task));
      ++pending_;
    }
    wake_.Signal();
  }
  void Wait() EXCLUDES(mutex_) {
    MutexLock lock(&mutex_);
    while (pending_ > 0) done_.Wait(&mutex_);
  }

 private:
  void Run() EXCLUDES(mutex_) {
    while (true) {
      std::function<void()> task;
      {
        MutexLock lock(&mutex_);
        while (queue_.empty() && !stopping_) wake_.Wait(&mutex_);
        if (queue_.empty()) return;
        task = std::move(queue_.front());
        queue_.erase(queue_.begin());
      }
      task();
      bool all_done;
      {
        MutexLock lock(&mutex_);
        all_done = --pending_ == 0;
      }
      if (all_done) done_.SignalAll();
    }
  }

  Mutex mutex_;
  CondVar wake_;
  CondVar done_;
  std::vector<std::function<void()>> queue_ GUARDED_BY(mutex_);
  int pending_ GUARDED_BY(mutex_) = 0;
  bool stopping_ GUARDED_BY(mutex_) = false;
  std::vector<std::thread> workers_;
};

std::string FormatUuid(Random* random) {
  unsigned char b[16];
  random->Fill(b, sizeof b);
  b[6] = static_cast<unsigned char>((b[6] & 0x0f) | 0x40);
  b[8] = static_cast<unsigned char>((b[8] & 0x3f) | 0x80);
  char out[37];
  std::snprintf(out, sizeof out,
                "%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-%02x%02x%02x%02x%02x%02x", b[0], b[1],
                b[2], b[3], b[4], b[5], b[6], b[7], b[8], b[9], b[10], b[11], b[12], b[13], b[14], b[15]);
  return out;
}

// One open output file of a partition.
struct OpenFile {
  std::string dir;          // relative partition folder ("" or "k=v/...")
  ResolvedPath final_path;  // where it ends up
  ResolvedPath temp_path;   // where it is written (== final_path on an object store)
  std::unique_ptr<FileSink> sink;
  int64_t rows = 0;
  int64_t bytes = 0;            // input bytes written to the file
  int64_t row_group_bytes = 0;  // input bytes since the last parquet row group cut
  uint64_t last_used = 0;
  Status status;                // the first failure of a task writing to it
};

class PartitionedWriter {
 public:
  PartitionedWriter(ResolvedPath base, FormatSpec spec, std::shared_ptr<arrow::Schema> file_schema,
                    std::string uuid, WriteLimits limits)
      : base_(std::move(base)), spec_(std::move(spec)), file_schema_(std::move(file_schema)),
        uuid_(std::move(uuid)), limits_(limits) {}

  // Opens (or reuses) the file of partition `dir`. Main thread only.
  Result<OpenFile*> FileFor(const std::string& dir, TaskPool* pool) {
    auto it = open_.find(dir);
    if (it != open_.end()) {
      it->second->last_used = ++clock_;
      return it->second.get();
    }
    while (static_cast<int>(open_.size()) >= std::max(1, limits_.max_open_files)) {
      auto lru = std::min_element(open_.begin(), open_.end(), [](const auto& a, const auto& b) {
        return a.second->last_used < b.second->last_used;
      });
      OG_RETURN_NOT_OK(Close({lru->first}, pool));
    }
    auto file = std::make_unique<OpenFile>();
    file->dir = dir;
    char number[16];
    std::snprintf(number, sizeof number, "%05lld", static_cast<long long>(next_file_++));
    std::string name = std::string("part-") + number + "-" + uuid_ +
                       (spec_.infix.empty() ? "" : "." + spec_.infix) + "." + spec_.extension + spec_.suffix;
    std::string rel_dir = dir.empty() ? "" : dir + "/";
    file->final_path = storage::ChildPath(base_, rel_dir + name);
    file->temp_path = base_.is_object_store ? file->final_path
                                            : storage::ChildPath(base_, rel_dir + kTempPrefix + name);
    if (!base_.is_object_store) {
      std::string parent = storage::ChildPath(base_, dir).path;
      if (dir.empty()) parent = base_.path;
      auto created = base_.fs->CreateDir(parent, /*recursive=*/true);
      if (!created.ok()) return IoError(storage::ChildPath(base_, dir).uri, "create the folder", created);
    }
    auto stream = base_.fs->OpenOutputStream(file->temp_path.path);
    if (!stream.ok()) return IoError(file->final_path.uri, "write", stream.status());
    temps_.push_back(file->temp_path);
    auto sink = OpenSink(spec_, *stream, file_schema_);
    if (!sink.ok()) {
      (void)(*stream)->Close();
      return IoError(file->final_path.uri, "write", sink.status());
    }
    file->sink = std::move(*sink);
    file->last_used = ++clock_;
    OpenFile* raw = file.get();
    open_[dir] = std::move(file);
    return raw;
  }

  // Finishes (on the pool, in parallel) and publishes (renames) the files of `dirs`. Main thread
  // only, with no task of this batch still running.
  Status Close(const std::vector<std::string>& dirs, TaskPool* pool) {
    std::vector<std::unique_ptr<OpenFile>> files;
    for (const auto& dir : dirs) {
      auto it = open_.find(dir);
      if (it == open_.end()) continue;
      files.push_back(std::move(it->second));
      open_.erase(it);
    }
    for (auto& file : files) {
      OpenFile* raw = file.get();
      if (!raw->status.ok()) continue;
      pool->Submit([raw] {
        auto finished = raw->sink->Finish();
        if (!finished.ok()) raw->status = IoError(raw->final_path.uri, "write", finished);
      });
    }
    pool->Wait();
    Status first;
    for (auto& file : files) {
      file->sink.reset();
      if (!file->status.ok()) {
        if (first.ok()) first = file->status;
        continue;
      }
      if (!base_.is_object_store) {
        auto moved = base_.fs->Move(file->temp_path.path, file->final_path.path);
        if (!moved.ok()) {
          if (first.ok()) first = IoError(file->final_path.uri, "publish", moved);
          continue;
        }
      }
      written_.push_back(file->final_path);
    }
    return first;
  }

  bool IsOpen(const std::string& dir) const { return open_.count(dir) > 0; }
  bool AtLimit() const { return static_cast<int>(open_.size()) >= std::max(1, limits_.max_open_files); }

  Status CloseAll(TaskPool* pool) {
    std::vector<std::string> dirs;
    for (const auto& [dir, file] : open_) dirs.push_back(dir);
    return Close(dirs, pool);
  }

  // After a failure: closes what is open without publishing, removes temporary files and the
  // files this write completed.
  void Abandon() {
    open_.clear();  // sinks are dropped unfinished: their files are temporary and removed below
    for (const auto& temp : temps_) (void)base_.fs->DeleteFile(temp.path);
    for (const auto& done : written_) (void)base_.fs->DeleteFile(done.path);
    written_.clear();
  }

  // Decides, after a batch, which files roll and which parquet row groups are cut (encoded on
  // the pool). Main thread only, with no task running.
  Status AfterBatch(TaskPool* pool) {
    std::vector<std::string> to_close;
    std::vector<OpenFile*> to_cut;
    int64_t buffered = 0;
    for (auto& [dir, file] : open_) {
      OG_RETURN_NOT_OK(file->status);
      if ((limits_.max_records_per_file > 0 && file->rows >= limits_.max_records_per_file) ||
          file->bytes >= limits_.max_file_bytes) {
        to_close.push_back(dir);
        continue;
      }
      if (spec_.format == Format::kParquet && file->row_group_bytes >= limits_.row_group_bytes) {
        to_cut.push_back(file.get());
        continue;
      }
      buffered += file->row_group_bytes;
    }
    if (spec_.format == Format::kParquet) {
      std::vector<OpenFile*> by_size;
      for (auto& [dir, file] : open_)
        if (file->row_group_bytes > 0 && file->row_group_bytes < limits_.row_group_bytes &&
            std::find(to_close.begin(), to_close.end(), dir) == to_close.end())
          by_size.push_back(file.get());
      std::sort(by_size.begin(), by_size.end(),
                [](OpenFile* a, OpenFile* b) { return a->row_group_bytes > b->row_group_bytes; });
      // Over budget: cut the largest buffers until the rest fits in half of it.
      if (buffered > limits_.buffered_bytes) {
        for (OpenFile* file : by_size) {
          if (buffered <= limits_.buffered_bytes / 2) break;
          buffered -= file->row_group_bytes;
          to_cut.push_back(file);
        }
      }
    }
    for (OpenFile* file : to_cut) {
      file->row_group_bytes = 0;
      pool->Submit([file] {
        auto cut = file->sink->CutRowGroup();
        if (!cut.ok()) file->status = IoError(file->final_path.uri, "write", cut);
      });
    }
    pool->Wait();
    for (OpenFile* file : to_cut) OG_RETURN_NOT_OK(file->status);
    return Close(to_close, pool);
  }

  std::vector<std::string> WrittenUris() const {
    std::vector<std::string> out;
    for (const auto& w : written_) out.push_back(w.uri);
    return out;
  }
  const FormatSpec& spec() const { return spec_; }

 private:
  ResolvedPath base_;
  FormatSpec spec_;
  std::shared_ptr<arrow::Schema> file_schema_;
  std::string uuid_;
  WriteLimits limits_;
  std::unordered_map<std::string, std::unique_ptr<OpenFile>> open_;
  std::vector<ResolvedPath> temps_;
  std::vector<ResolvedPath> written_;
  int64_t next_file_ = 0;
  uint64_t clock_ = 0;
};

// Bytes of data `rows` of `whole`'s rows stand for: the buffer ranges the batch references (a
// slice counts its own rows, not its parent's buffers), pro rata.
int64_t SliceBytes(const arrow::RecordBatch& whole, int64_t rows) {
  if (whole.num_rows() == 0) return 0;
  auto referenced = arrow::util::ReferencedBufferSize(whole);
  const int64_t bytes = referenced.ok() ? *referenced : 0;
  return bytes * rows / whole.num_rows();
}

struct Group {
  std::string dir;
  std::vector<int64_t> rows;
};

// One integer-like key column (ints, dates, timestamps): grouped by the raw values, and only the
// distinct values are formatted.
template <typename CType>
Result<std::vector<Group>> SplitByIntegerKey(const arrow::Array& column, const std::string& key_name) {
  std::vector<Group> groups;
  std::unordered_map<CType, size_t> index;
  std::optional<size_t> null_group;
  const CType* values = column.data()->GetValues<CType>(1);
  const int64_t n = column.length();
  CType last_value{};
  size_t last_group = SIZE_MAX;
  for (int64_t r = 0; r < n; ++r) {
    size_t g;
    if (column.IsNull(r)) {
      if (!null_group) {
        null_group = groups.size();
        groups.push_back({key_name + "=" + kDefaultPartition, {}});
      }
      g = *null_group;
    } else if (last_group != SIZE_MAX && values[r] == last_value) {
      g = last_group;  // sorted or clustered input: no hash lookup
    } else {
      auto [it, inserted] = index.try_emplace(values[r], groups.size());
      if (inserted) {
        OG_ASSIGN_OR_RETURN(auto text, GlueCast(column.Slice(r, 1), arrow::utf8()));
        const auto& str = static_cast<const arrow::StringArray&>(*text);
        std::string value = str.IsNull(0) ? "" : std::string(str.GetView(0));
        groups.push_back({key_name + "=" + (value.empty() ? std::string(kDefaultPartition)
                                                            : EscapePartitionValue(value)), {}});
      }
      g = it->second;
      last_value = values[r];
      last_group = g;
    }
    groups[g].rows.push_back(r);
  }
  return groups;
}

// Splits `batch` by the text of its key columns. Keys are formatted as Glue prints values.
Result<std::vector<Group>> SplitByKeys(const BatchPtr& batch, const std::vector<int>& key_columns,
                                       const std::vector<std::string>& key_names) {
  if (key_columns.size() == 1) {
    const auto& column = *batch->column(key_columns[0]);
    switch (column.type_id()) {
      case arrow::Type::INT8: return SplitByIntegerKey<int8_t>(column, key_names[0]);
      case arrow::Type::INT16: return SplitByIntegerKey<int16_t>(column, key_names[0]);
      case arrow::Type::INT32: case arrow::Type::DATE32: return SplitByIntegerKey<int32_t>(column, key_names[0]);
      case arrow::Type::INT64: case arrow::Type::DATE64: case arrow::Type::TIMESTAMP:
        return SplitByIntegerKey<int64_t>(column, key_names[0]);
      case arrow::Type::UINT8: return SplitByIntegerKey<uint8_t>(column, key_names[0]);
      case arrow::Type::UINT16: return SplitByIntegerKey<uint16_t>(column, key_names[0]);
      case arrow::Type::UINT32: return SplitByIntegerKey<uint32_t>(column, key_names[0]);
      case arrow::Type::UINT64: return SplitByIntegerKey<uint64_t>(column, key_names[0]);
      default: break;
    }
  }
  std::vector<std::shared_ptr<arrow::StringArray>> keys;
  for (int index : key_columns) {
    OG_ASSIGN_OR_RETURN(auto text, GlueCast(batch->column(index), arrow::utf8()));
    keys.push_back(std::static_pointer_cast<arrow::StringArray>(text));
  }
  std::vector<Group> groups;
  const int64_t n = batch->num_rows();
  if (keys.size() == 1) {
    std::unordered_map<std::string_view, size_t> index;
    std::optional<size_t> null_group;
    const auto& column = *keys[0];
    for (int64_t r = 0; r < n; ++r) {
      size_t g;
      if (column.IsNull(r) || column.value_length(r) == 0) {
        if (!null_group) {
          null_group = groups.size();
          groups.push_back({key_names[0] + "=" + kDefaultPartition, {}});
        }
        g = *null_group;
      } else {
        std::string_view v = column.GetView(r);
        auto [it, inserted] = index.try_emplace(v, groups.size());
        if (inserted) groups.push_back({key_names[0] + "=" + EscapePartitionValue(v), {}});
        g = it->second;
      }
      groups[g].rows.push_back(r);
    }
    return groups;
  }
  std::unordered_map<std::string, size_t> index;
  std::string dir;
  for (int64_t r = 0; r < n; ++r) {
    dir.clear();
    for (size_t k = 0; k < keys.size(); ++k) {
      if (k) dir.push_back('/');
      dir += key_names[k];
      dir.push_back('=');
      if (keys[k]->IsNull(r) || keys[k]->value_length(r) == 0) dir += kDefaultPartition;
      else dir += EscapePartitionValue(keys[k]->GetView(r));
    }
    auto [it, inserted] = index.try_emplace(dir, groups.size());
    if (inserted) groups.push_back({dir, {}});
    groups[it->second].rows.push_back(r);
  }
  return groups;
}

Result<BatchPtr> TakeRows(const BatchPtr& batch, const std::vector<int64_t>& rows) {
  if (static_cast<int64_t>(rows.size()) == batch->num_rows()) return batch;
  if (rows.back() - rows.front() + 1 == static_cast<int64_t>(rows.size()))
    return batch->Slice(rows.front(), static_cast<int64_t>(rows.size()));
  arrow::Int64Builder builder;
  if (!builder.AppendValues(rows).ok()) return Status::Internal("out of memory");
  std::shared_ptr<arrow::Array> indices;
  if (!builder.Finish(&indices).ok()) return Status::Internal("out of memory");
  auto taken = arrow::compute::Take(arrow::Datum(batch), arrow::Datum(indices));
  if (!taken.ok()) return Status::Internal("take: " + taken.status().ToString());
  return taken->record_batch();
}

// Yields the input's batches in slices of at most `rows` rows (no copy), so that one huge batch
// (a whole table in one chunk) is split and buffered under the same memory budget as a stream.
class SlicingReader : public arrow::RecordBatchReader {
 public:
  SlicingReader(std::shared_ptr<arrow::RecordBatchReader> input, int64_t rows)
      : input_(std::move(input)), rows_(rows) {}
  std::shared_ptr<arrow::Schema> schema() const override { return input_->schema(); }
  arrow::Status ReadNext(BatchPtr* out) override {
    while (current_ == nullptr || offset_ >= current_->num_rows()) {
      ARROW_RETURN_NOT_OK(input_->ReadNext(&current_));
      offset_ = 0;
      if (current_ == nullptr) { *out = nullptr; return arrow::Status::OK(); }
      if (current_->num_rows() == 0) continue;
    }
    const int64_t take = std::min(rows_, current_->num_rows() - offset_);
    *out = offset_ == 0 && take == current_->num_rows() ? current_ : current_->Slice(offset_, take);
    offset_ += take;
    return arrow::Status::OK();
  }

 private:
  std::shared_ptr<arrow::RecordBatchReader> input_;
  int64_t rows_;
  BatchPtr current_;
  int64_t offset_ = 0;
};

Result<std::vector<std::string>> WriteImpl(const std::shared_ptr<arrow::RecordBatchReader>& stream,
                                           std::string_view path, std::string_view format,
                                           const std::map<std::string, std::string>& options,
                                           const std::vector<std::string>& partition_keys,
                                           const storage::StorageOptions& storage, Random* random,
                                           WriteLimits limits) {
  if (stream == nullptr) return Status::InvalidInput("write: no input stream");
  OG_ASSIGN_OR_RETURN(FormatSpec spec, ParseFormat(format, options));
  auto number = [&](const char* key, int64_t* field) -> Status {
    auto it = options.find(key);
    if (it == options.end()) return Status::OK();
    int64_t v;
    auto [p, ec] = std::from_chars(it->second.data(), it->second.data() + it->second.size(), v);
    if (ec != std::errc() || p != it->second.data() + it->second.size() || v < 0)
      return Status::InvalidInput(std::string(key) + " must be a non-negative integer, got \"" +
                                  TruncateUtf8(it->second, 50) + "\"");
    *field = v;
    return Status::OK();
  };
  OG_RETURN_NOT_OK(number("maxRecordsPerFile", &limits.max_records_per_file));
  OG_RETURN_NOT_OK(number("maxFileBytes", &limits.max_file_bytes));
  int64_t max_open = limits.max_open_files;
  OG_RETURN_NOT_OK(number("maxOpenFiles", &max_open));
  limits.max_open_files = static_cast<int>(std::clamp<int64_t>(max_open, 1, 10000));
  if (limits.max_file_bytes <= 0) limits.max_file_bytes = 1LL << 30;

  OG_ASSIGN_OR_RETURN(ResolvedPath base, storage::ResolveArrowPath(path, storage));
  const std::shared_ptr<arrow::Schema> schema = stream->schema();
  std::vector<int> key_columns;
  for (const auto& key : partition_keys) {
    int index = schema->GetFieldIndex(key);
    if (index < 0)
      return Status::InvalidInput("write " + base.uri + ": partition key \"" + TruncateUtf8(key, 200) +
                                  "\" is not a field of the data");
    if (std::find(key_columns.begin(), key_columns.end(), index) != key_columns.end())
      return Status::InvalidInput("write " + base.uri + ": partition key \"" + key + "\" given twice");
    key_columns.push_back(index);
  }
  std::vector<int> data_columns;
  std::vector<std::shared_ptr<arrow::Field>> file_fields;
  for (int c = 0; c < schema->num_fields(); ++c) {
    if (std::find(key_columns.begin(), key_columns.end(), c) != key_columns.end()) continue;
    data_columns.push_back(c);
    OG_ASSIGN_OR_RETURN(auto field, FileField(schema->field(c), spec.format));
    file_fields.push_back(field);
  }
  auto file_schema = arrow::schema(file_fields);

  SystemRandom system_random;
  if (random == nullptr) random = &system_random;
  PartitionedWriter writer(base, spec, file_schema, FormatUuid(random), limits);
  const int threads = limits.threads > 0 ? limits.threads
                                         : static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  TaskPool pool(threads);

  auto fail = [&](Status status) -> Status {
    pool.Wait();
    writer.Abandon();
    return status;
  };

  auto input = std::make_shared<SlicingReader>(stream, 128 * 1024);
  BatchPtr batch;
  auto read = input->ReadNext(&batch);
  if (!read.ok()) return fail(Status::InvalidInput("reading the data to write to " + base.uri + ": " + read.message()));
  while (batch != nullptr) {
    if (batch->num_rows() > 0) {
      std::vector<Group> groups;
      if (key_columns.empty()) {
        groups.push_back({"", {}});
      } else {
        auto split = SplitByKeys(batch, key_columns, partition_keys);
        if (!split.ok()) return fail(split.status());
        groups = std::move(*split);
      }
      auto data = batch->SelectColumns(data_columns);
      if (!data.ok()) return fail(Status::Internal(data.status().ToString()));
      BatchPtr data_batch = *data;
      for (auto& group : groups) {
        // Closing a file to make room must not race a task still writing to it.
        if (!writer.IsOpen(group.dir) && writer.AtLimit()) {
          pool.Wait();
          Status after = writer.AfterBatch(&pool);
          if (!after.ok()) return fail(after);
        }
        auto file = writer.FileFor(group.dir, &pool);
        if (!file.ok()) return fail(file.status());
        OpenFile* target = *file;
        const int64_t rows = group.rows.empty() ? data_batch->num_rows() : static_cast<int64_t>(group.rows.size());
        const int64_t bytes = SliceBytes(*data_batch, rows);
        target->rows += rows;
        target->bytes += bytes;
        target->row_group_bytes += bytes;
        auto shared_rows = std::make_shared<std::vector<int64_t>>(std::move(group.rows));
        pool.Submit([target, data_batch, shared_rows, file_schema] {
          if (!target->status.ok()) return;
          BatchPtr piece = data_batch;
          if (!shared_rows->empty()) {
            auto taken = TakeRows(data_batch, *shared_rows);
            if (!taken.ok()) { target->status = taken.status(); return; }
            piece = *taken;
          }
          auto converted = ToFileBatch(piece, file_schema);
          if (!converted.ok()) { target->status = converted.status(); return; }
          auto written = target->sink->Write(*converted);
          if (!written.ok()) target->status = IoError(target->final_path.uri, "write", written);
        });
      }
    }
    // Read the next batch while the workers encode this one.
    BatchPtr next;
    read = input->ReadNext(&next);
    pool.Wait();
    if (!read.ok()) return fail(Status::InvalidInput("reading the data to write to " + base.uri + ": " + read.message()));
    Status after = writer.AfterBatch(&pool);
    if (!after.ok()) return fail(after);
    batch = std::move(next);
  }
  Status closed = writer.CloseAll(&pool);
  if (!closed.ok()) return fail(closed);
  return writer.WrittenUris();
}

}  // namespace

std::string EscapePartitionValue(std::string_view value) {
  static const char kHex[] = "0123456789ABCDEF";
  std::string out;
  out.reserve(value.size());
  for (unsigned char c : value) {
    bool escape = c < 0x20 || c == 0x7F || c == '"' || c == '#' || c == '%' || c == '\'' ||
                  c == '*' || c == '/' || c == ':' || c == '=' || c == '?' || c == '\\' ||
                  c == '{' || c == '[' || c == ']' || c == '^';
    if (escape) {
      out.push_back('%');
      out.push_back(kHex[c >> 4]);
      out.push_back(kHex[c & 15]);
    } else {
      out.push_back(static_cast<char>(c));
    }
  }
  return out;
}

Result<std::vector<std::string>> Write(const std::shared_ptr<arrow::RecordBatchReader>& stream,
                                       std::string_view path, std::string_view format,
                                       const std::map<std::string, std::string>& options,
                                       const std::vector<std::string>& partition_keys,
                                       const storage::StorageOptions& storage, Random* random,
                                       WriteLimits limits) {
  try {
    return WriteImpl(stream, path, format, options, partition_keys, storage, random, limits);
  } catch (const std::exception& e) {
    return Status::Internal("write " + TruncateUtf8(path, 1200) + ": " + e.what());
  }
}

Result<std::vector<std::string>> DeletePrefix(std::string_view path,
                                              const storage::StorageOptions& storage,
                                              std::optional<int64_t> older_than_ms,
                                              const std::vector<std::string>& exclusions) {
  try {
    OG_ASSIGN_OR_RETURN(ResolvedPath base, storage::ResolveArrowPath(path, storage));
    std::vector<arrow::fs::FileInfo> files;
    auto info = base.fs->GetFileInfo(base.path);
    if (!info.ok()) return IoError(base.uri, "list", info.status());
    if (info->type() == arrow::fs::FileType::File) {
      files.push_back(*info);
    } else if (info->type() == arrow::fs::FileType::Directory || base.is_object_store) {
      arrow::fs::FileSelector selector;
      selector.base_dir = base.path;
      selector.recursive = true;
      selector.allow_not_found = true;
      auto listed = base.fs->GetFileInfo(selector);
      if (!listed.ok()) return IoError(base.uri, "list", listed.status());
      files = std::move(*listed);
    }
    std::vector<std::string> deleted;
    const std::string prefix = base.path + "/";
    for (const auto& file : files) {
      if (file.type() != arrow::fs::FileType::File) continue;
      std::string rel = file.path() == base.path ? "" : file.path().substr(std::min(prefix.size(), file.path().size()));
      storage::ResolvedPath child = rel.empty() ? base : storage::ChildPath(base, rel);
      if (older_than_ms) {
        const int64_t mtime_ms = std::chrono::duration_cast<std::chrono::milliseconds>(
                                     file.mtime().time_since_epoch()).count();
        if (mtime_ms >= *older_than_ms) continue;
      }
      bool excluded = false;
      for (const auto& glob : exclusions)
        if (GlobMatches(glob, child.uri)) { excluded = true; break; }
      if (excluded) continue;
      auto removed = base.fs->DeleteFile(file.path());
      if (!removed.ok()) return IoError(child.uri, "delete", removed);
      deleted.push_back(child.uri);
    }
    return deleted;
  } catch (const std::exception& e) {
    return Status::Internal("delete " + TruncateUtf8(path, 1200) + ": " + e.what());
  }
}

}  // namespace openglue::engine
