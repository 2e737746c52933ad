#include "engine/scan.h"

#include <algorithm>
#include <map>
#include <optional>
#include <thread>
#include <utility>

#include <arrow/api.h>
#include <arrow/adapters/orc/adapter.h>
#include <arrow/csv/api.h>
#include <arrow/filesystem/filesystem.h>
#include <arrow/io/compressed.h>
#include <arrow/io/interfaces.h>
#include <arrow/util/compression.h>
#include <arrow/util/delimiting.h>
#include <arrow/io/memory.h>
#include <arrow/csv/chunker.h>
#include <cstring>
#include <parquet/arrow/reader.h>
#include <parquet/exception.h>
#include <parquet/file_reader.h>

#include "common/json.h"
#include "common/strings.h"
#include "engine/align.h"
#include "engine/glue_cast.h"
#include "engine/glue_types.h"
#include "engine/json_records.h"
#include "engine/parallel_map.h"
#include "storage/columnar_footer.h"

namespace openglue::engine {

// ---- errors ---------------------------------------------------------------------------------

namespace {

// "<uri>: <what>", sanitized and bounded (Arrow's CSV errors quote the offending row).
Status FileError(const std::string& uri, std::string_view what) {
  return Status::InvalidInput(SanitizeUtf8(TruncateUtf8(uri + ": " + std::string(what), 1000)));
}

Status FileError(const std::string& uri, const arrow::Status& st) {
  if (st.IsOutOfMemory()) return Status::Internal(uri + ": out of memory");
  return FileError(uri, st.message());
}

int WorkerThreads() {
  unsigned n = std::thread::hardware_concurrency();
  return static_cast<int>(std::clamp(n == 0 ? 2u : n, 2u, 8u));
}

bool Truthy(const Options& options, const std::string& key, bool fallback) {
  auto it = options.find(key);
  if (it == options.end() || it->second.empty()) return fallback;
  std::string v = ToLower(Trim(it->second));
  return v == "true" || v == "1" || v == "yes";
}

std::string Option(const Options& options, const std::string& key) {
  auto it = options.find(key);
  return it == options.end() ? std::string() : it->second;
}

}  // namespace

// ---- listing --------------------------------------------------------------------------------

namespace {

bool IsHiddenRelative(std::string_view relative) {
  for (const auto& part : Split(relative, '/')) {
    if (!part.empty() && (part[0] == '_' || part[0] == '.')) return true;
  }
  return false;
}

}  // namespace

Result<std::vector<ListedFile>> ListFiles(const std::vector<std::string>& paths,
                                          const Options& options,
                                          const storage::StorageOptions& storage) {
  bool recurse = Truthy(options, "recurse", true);
  std::vector<std::string> exclusions;
  std::string exclusions_text = Trim(Option(options, "exclusions"));
  if (!exclusions_text.empty()) {
    Json parsed = ParseJson(exclusions_text);
    if (parsed.is_discarded() || !parsed.is_array()) {
      return Status::InvalidInput("exclusions must be a JSON list of glob strings");
    }
    for (const auto& item : parsed) {
      if (!item.is_string()) return Status::InvalidInput("exclusions must be a JSON list of strings");
      exclusions.push_back(item.get<std::string>());
    }
  }
  std::vector<ListedFile> out;
  for (const auto& uri : paths) {
    OG_ASSIGN_OR_RETURN(storage::ResolvedPath resolved, storage::ResolveArrowPath(uri, storage));
    auto info = resolved.fs->GetFileInfo(resolved.path);
    if (!info.ok()) return FileError(uri, info.status());
    std::vector<std::pair<std::string, arrow::fs::FileInfo>> found;
    if (info->type() == arrow::fs::FileType::File) {
      found.emplace_back(uri, *info);
    } else if (info->type() == arrow::fs::FileType::Directory) {
      arrow::fs::FileSelector selector;
      selector.base_dir = resolved.path;
      selector.recursive = recurse;
      auto listed = resolved.fs->GetFileInfo(selector);
      if (!listed.ok()) return FileError(uri, listed.status());
      std::string base = uri;
      while (!base.empty() && base.back() == '/') base.pop_back();
      std::string base_path = resolved.path;
      while (base_path.size() > 1 && base_path.back() == '/') base_path.pop_back();
      for (auto& entry : *listed) {
        if (entry.type() != arrow::fs::FileType::File) continue;
        std::string relative = entry.path().substr(std::min(entry.path().size(), base_path.size() + 1));
        if (IsHiddenRelative(relative)) continue;
        found.emplace_back(base + "/" + relative, entry);
      }
    } else {
      return FileError(uri, "no such file or directory");
    }
    for (auto& [file_uri, entry] : found) {
      bool excluded = false;
      for (const auto& pattern : exclusions) {
        if (GlobMatches(pattern, file_uri)) excluded = true;
      }
      if (excluded) continue;
      ListedFile file;
      file.uri = file_uri;
      file.size = entry.size() < 0 ? 0 : entry.size();
      file.mtime_ms = std::chrono::duration_cast<std::chrono::milliseconds>(
                          entry.mtime().time_since_epoch()).count();
      out.push_back(std::move(file));
    }
  }
  std::sort(out.begin(), out.end(),
            [](const ListedFile& a, const ListedFile& b) { return a.uri < b.uri; });
  out.erase(std::unique(out.begin(), out.end(),
                        [](const ListedFile& a, const ListedFile& b) { return a.uri == b.uri; }),
            out.end());
  return out;
}

// ---- the scan's state -----------------------------------------------------------------------

struct ScanState {
  std::vector<std::string> files;
  Format format = Format::kCsv;
  Options options;
  storage::StorageOptions storage;
  int threads = 2;
  // csv
  arrow::csv::ParseOptions parse = arrow::csv::ParseOptions::Defaults();
  bool with_header = false;
  bool skip_first = false;
  // json
  JsonPath json_path;
  bool multiline = false;
  // Bad JSON records are kept here (by file index and line) instead of failing the read.
  bool collect_bad = false;
  mutable Mutex bad_mu;
  mutable std::map<std::pair<size_t, int64_t>, BadRecord> bad GUARDED_BY(bad_mu);
};

namespace {

// One unit of raw input: a CSV batch (all strings), a Parquet/ORC batch, or JSON text.
struct RawItem {
  size_t file = 0;
  std::shared_ptr<arrow::RecordBatch> batch;
  std::shared_ptr<arrow::Buffer> csv_block;                     // CSV: whole rows, parsed by a worker
  std::shared_ptr<const std::vector<std::string>> csv_names;   // ... with these column names
  std::shared_ptr<arrow::Schema> csv_schema;                    // ... into this schema
  std::shared_ptr<const std::string> text;   // JSON: the bytes the views point into
  std::vector<std::string_view> values;      // JSON: one text per top-level value
  int64_t first_line = 0;                    // JSON lines: line number of values[0]
  bool lines = false;                        // JSON lines: values are lines
};

Result<arrow::Compression::type> CompressionFor(const ScanState& state, const std::string& uri) {
  std::string option = ToLower(Trim(Option(state.options, "compressionType")));
  if (option.empty()) option = ToLower(Trim(Option(state.options, "compression")));
  if (option == "none" || option == "uncompressed") return arrow::Compression::UNCOMPRESSED;
  if (option == "gzip" || option == "gz") return arrow::Compression::GZIP;
  if (option == "bzip2" || option == "bz2") return arrow::Compression::BZ2;
  if (option == "zstd") return arrow::Compression::ZSTD;
  if (!option.empty()) {
    return FileError(uri, "compressionType '" + option + "' is not supported (gzip, bzip2, zstd, none)");
  }
  std::string lower = ToLower(uri);
  auto ends = [&](std::string_view suffix) {
    return lower.size() >= suffix.size() && lower.compare(lower.size() - suffix.size(), suffix.size(), suffix) == 0;
  };
  if (ends(".gz") || ends(".gzip")) return arrow::Compression::GZIP;
  if (ends(".bz2")) return arrow::Compression::BZ2;
  if (ends(".zst")) return arrow::Compression::ZSTD;
  if (ends(".snappy")) {
    return FileError(uri, "snappy-compressed text files are not supported (gzip, bzip2, zstd)");
  }
  return arrow::Compression::UNCOMPRESSED;
}

Result<storage::ResolvedPath> ResolveFile(const ScanState& state, const std::string& uri) {
  auto resolved = storage::ResolveArrowPath(uri, state.storage);
  if (!resolved.ok()) return FileError(uri, resolved.status().message());
  auto info = resolved->fs->GetFileInfo(resolved->path);
  if (!info.ok()) return FileError(uri, info.status());
  if (info->type() == arrow::fs::FileType::NotFound) return FileError(uri, "no such file");
  if (info->type() != arrow::fs::FileType::File) return FileError(uri, "not a file");
  return resolved;
}

Result<std::shared_ptr<arrow::io::InputStream>> OpenText(const ScanState& state,
                                                         const std::string& uri) {
  OG_ASSIGN_OR_RETURN(auto resolved, ResolveFile(state, uri));
  OG_ASSIGN_OR_RETURN(auto compression, CompressionFor(state, uri));
  auto raw = resolved.fs->OpenInputStream(resolved.path);
  if (!raw.ok()) return FileError(uri, raw.status());
  if (compression == arrow::Compression::UNCOMPRESSED) return *raw;
  auto codec = arrow::util::Codec::Create(compression);
  if (!codec.ok()) return FileError(uri, codec.status());
  auto stream = arrow::io::CompressedInputStream::Make(codec->get(), *raw);
  if (!stream.ok()) return FileError(uri, stream.status());
  // The stream borrows the codec: keep it alive as long as the stream.
  struct Owning : arrow::io::InputStream {
    std::unique_ptr<arrow::util::Codec> codec;
    std::shared_ptr<arrow::io::CompressedInputStream> inner;
    arrow::Status Close() override { return inner->Close(); }
    bool closed() const override { return inner->closed(); }
    arrow::Result<int64_t> Tell() const override { return inner->Tell(); }
    arrow::Result<int64_t> Read(int64_t n, void* out) override { return inner->Read(n, out); }
    arrow::Result<std::shared_ptr<arrow::Buffer>> Read(int64_t n) override { return inner->Read(n); }
  };
  auto owning = std::make_shared<Owning>();
  owning->codec = std::move(*codec);
  owning->inner = *stream;
  return std::static_pointer_cast<arrow::io::InputStream>(owning);
}

Result<std::shared_ptr<arrow::io::RandomAccessFile>> OpenRandom(const ScanState& state,
                                                                const std::string& uri) {
  OG_ASSIGN_OR_RETURN(auto resolved, ResolveFile(state, uri));
  auto file = resolved.fs->OpenInputFile(resolved.path);
  if (!file.ok()) return FileError(uri, file.status());
  return *file;
}

// ---- CSV ------------------------------------------------------------------------------------

int32_t CsvBlockSize(int64_t batch_rows) {
  // About batch_rows rows of a typical 100-150 byte row: fewer, larger batches keep the per-batch
  // costs downstream (partition splits, small allocations) low.
  return static_cast<int32_t>(std::clamp<int64_t>(batch_rows * 128, 1 << 20, 8 << 20));
}

// A streaming CSV reader over `input` with the scan's options. With `names`, the input is a
// block from the middle of a file: no header, nothing skipped, columns named `names`.
Result<std::shared_ptr<arrow::csv::StreamingReader>> MakeCsvReader(
    const ScanState& state, const std::string& uri, std::shared_ptr<arrow::io::InputStream> input,
    int32_t block_size, const std::vector<std::string>* names) {
  auto read = arrow::csv::ReadOptions::Defaults();
  read.use_threads = names == nullptr;
  read.block_size = block_size;
  if (names != nullptr) {
    read.column_names = *names;
  } else {
    read.autogenerate_column_names = !state.with_header;
    if (state.skip_first) {
      if (state.with_header) {
        read.skip_rows_after_names = 1;
      } else {
        read.skip_rows = 1;
      }
    }
  }
  auto convert = arrow::csv::ConvertOptions::Defaults();
  convert.default_column_type = arrow::utf8();
  convert.null_values = {""};
  convert.strings_can_be_null = true;
  convert.quoted_strings_can_be_null = true;
  convert.check_utf8 = true;
  try {
    auto reader = arrow::csv::StreamingReader::Make(arrow::io::default_io_context(), input, read,
                                                    state.parse, convert);
    if (!reader.ok()) {
      if (reader.status().message().find("Empty CSV file") != std::string::npos) {
        return std::shared_ptr<arrow::csv::StreamingReader>();
      }
      return FileError(uri, reader.status());
    }
    return *reader;
  } catch (const std::exception& e) {
    return FileError(uri, e.what());
  }
}

Result<std::shared_ptr<arrow::csv::StreamingReader>> OpenCsv(const ScanState& state,
                                                             const std::string& uri,
                                                             int64_t batch_rows) {
  OG_ASSIGN_OR_RETURN(auto input, OpenText(state, uri));
  return MakeCsvReader(state, uri, std::move(input), CsvBlockSize(batch_rows), nullptr);
}

// Without multiLine every line break ends a row, so no value can hold one: one that does is a
// quote left open, which swallowed the following rows into a single value.
Status CheckNoOpenQuote(const ScanState& state, const std::string& uri,
                        const arrow::RecordBatch& batch) {
  if (state.parse.newlines_in_values) return Status::OK();
  for (const auto& column : batch.columns()) {
    if (column->type_id() != arrow::Type::STRING) continue;
    const auto& strings = static_cast<const arrow::StringArray&>(*column);
    if (strings.length() == 0 || strings.value_data() == nullptr) continue;
    const auto* begin = strings.value_data()->data() + strings.value_offset(0);
    const int64_t size = strings.value_offset(strings.length()) - strings.value_offset(0);
    if (size > 0 && std::memchr(begin, '\n', static_cast<size_t>(size)) != nullptr)
      return FileError(uri, "CSV parse error: a quoted value is not closed before the end of its "
                            "line (set multiLine for values that hold line breaks)");
  }
  return Status::OK();
}

// Every batch of a reader as one batch (nullptr when it has none).
Result<std::shared_ptr<arrow::RecordBatch>> ReadWhole(const std::string& uri,
                                                      arrow::RecordBatchReader& reader) {
  std::vector<std::shared_ptr<arrow::RecordBatch>> batches;
  while (true) {
    std::shared_ptr<arrow::RecordBatch> batch;
    arrow::Status st;
    try {
      st = reader.ReadNext(&batch);
    } catch (const std::exception& e) {
      st = arrow::Status::Invalid(e.what());
    }
    if (!st.ok()) return FileError(uri, st);
    if (batch == nullptr) break;
    batches.push_back(std::move(batch));
  }
  if (batches.empty()) return std::shared_ptr<arrow::RecordBatch>();
  if (batches.size() == 1) return batches[0];
  auto table = arrow::Table::FromRecordBatches(reader.schema(), batches);
  if (!table.ok()) return FileError(uri, table.status());
  auto combined = (*table)->CombineChunksToBatch();
  if (!combined.ok()) return FileError(uri, combined.status());
  return *combined;
}

// Without a header Arrow names columns f0, f1, ...; Glue names them col0, col1, ...
std::shared_ptr<arrow::Schema> CsvSchema(const ScanState& state,
                                         const std::shared_ptr<arrow::Schema>& schema) {
  if (state.with_header) return schema;
  arrow::FieldVector fields;
  for (int i = 0; i < schema->num_fields(); ++i) {
    fields.push_back(arrow::field("col" + std::to_string(i), arrow::utf8()));
  }
  return arrow::schema(std::move(fields));
}

// Cuts each CSV file into blocks of whole rows (Arrow's chunker knows quoting and, with
// multiLine, newlines inside values); workers parse the blocks in parallel. The first block of a
// file is parsed here, with the header and skipped rows, to learn the column names.
class CsvProducer {
 public:
  CsvProducer(std::shared_ptr<const ScanState> state, int64_t batch_rows)
      : state_(std::move(state)), block_size_(CsvBlockSize(batch_rows)) {}

  Result<std::optional<RawItem>> operator()() {
    while (true) {
      if (!input_) {
        if (file_ >= state_->files.size()) return std::optional<RawItem>();
        OG_ASSIGN_OR_RETURN(input_, OpenText(*state_, state_->files[file_]));
        chunker_ = arrow::csv::MakeChunker(state_->parse);
        carry_.reset();
        eof_ = false;
        first_ = true;
      }
      const std::string& uri = state_->files[file_];
      OG_ASSIGN_OR_RETURN(auto whole, NextWhole(uri));
      if (whole == nullptr) {
        input_.reset();
        ++file_;
        continue;
      }
      RawItem item;
      item.file = file_;
      if (first_) {
        first_ = false;
        auto reader = MakeCsvReader(*state_, uri, std::make_shared<arrow::io::BufferReader>(whole),
                                    static_cast<int32_t>(std::min<int64_t>(whole->size() + 1, INT32_MAX)),
                                    nullptr);
        if (!reader.ok()) return reader.status();
        if (*reader == nullptr) {  // nothing but blank or skipped lines: an empty file
          input_.reset();
          ++file_;
          continue;
        }
        auto names = std::make_shared<std::vector<std::string>>((*reader)->schema()->field_names());
        names_ = names;
        schema_ = CsvSchema(*state_, (*reader)->schema());
        OG_ASSIGN_OR_RETURN(auto batch, ReadWhole(uri, **reader));
        if (batch != nullptr) OG_RETURN_NOT_OK(CheckNoOpenQuote(*state_, uri, *batch));
        if (batch == nullptr) {
          auto empty = arrow::RecordBatch::MakeEmpty(schema_);
          if (!empty.ok()) return FileError(uri, empty.status());
          batch = *empty;
        }
        item.batch = arrow::RecordBatch::Make(schema_, batch->num_rows(), batch->columns());
      } else {
        item.csv_block = std::move(whole);
        item.csv_names = names_;
        item.csv_schema = schema_;
      }
      return std::optional<RawItem>(std::move(item));
    }
  }

 private:
  // The next run of whole rows of the current file; nullptr at its end.
  Result<std::shared_ptr<arrow::Buffer>> NextWhole(const std::string& uri) {
    while (true) {
      if (eof_) {
        auto rest = std::move(carry_);
        carry_.reset();
        if (rest == nullptr || rest->size() == 0) return std::shared_ptr<arrow::Buffer>();
        return rest;  // the last row may lack its newline
      }
      auto block = input_->Read(block_size_);
      if (!block.ok()) return FileError(uri, block.status());
      if ((*block)->size() == 0) {
        eof_ = true;
        continue;
      }
      std::shared_ptr<arrow::Buffer> data = *block;
      if (carry_ != nullptr && carry_->size() > 0) {
        auto joined = arrow::AllocateResizableBuffer(carry_->size() + data->size());
        if (!joined.ok()) return FileError(uri, joined.status());
        std::memcpy((*joined)->mutable_data(), carry_->data(), carry_->size());
        std::memcpy((*joined)->mutable_data() + carry_->size(), data->data(), data->size());
        data = std::shared_ptr<arrow::Buffer>(std::move(*joined));
      }
      std::shared_ptr<arrow::Buffer> whole, partial;
      auto st = chunker_->Process(data, &whole, &partial);
      if (!st.ok()) return FileError(uri, st);
      if (whole == nullptr || whole->size() == 0) {
        carry_ = data;  // a row longer than a block: read on
        continue;
      }
      carry_ = partial;
      return whole;
    }
  }

  std::shared_ptr<const ScanState> state_;
  int32_t block_size_;
  size_t file_ = 0;
  std::shared_ptr<arrow::io::InputStream> input_;
  std::unique_ptr<arrow::Chunker> chunker_;
  std::shared_ptr<arrow::Buffer> carry_;
  bool eof_ = false;
  bool first_ = true;
  std::shared_ptr<const std::vector<std::string>> names_;
  std::shared_ptr<arrow::Schema> schema_;
};

// The batch of a CSV item: parsed here (on a worker) when the producer handed over a block.
Result<std::shared_ptr<arrow::RecordBatch>> CsvBatch(const ScanState& state, const RawItem& item) {
  if (item.csv_block == nullptr) return item.batch;
  const std::string& uri = state.files[item.file];
  OG_ASSIGN_OR_RETURN(
      auto reader,
      MakeCsvReader(state, uri, std::make_shared<arrow::io::BufferReader>(item.csv_block),
                    static_cast<int32_t>(std::min<int64_t>(item.csv_block->size() + 1, INT32_MAX)),
                    item.csv_names.get()));
  std::shared_ptr<arrow::RecordBatch> batch;
  if (reader != nullptr) {
    OG_ASSIGN_OR_RETURN(batch, ReadWhole(uri, *reader));
  }
  if (batch == nullptr) {
    auto empty = arrow::RecordBatch::MakeEmpty(item.csv_schema);
    if (!empty.ok()) return FileError(uri, empty.status());
    return *empty;
  }
  OG_RETURN_NOT_OK(CheckNoOpenQuote(state, uri, *batch));
  return arrow::RecordBatch::Make(item.csv_schema, batch->num_rows(), batch->columns());
}

// A string column's values as the inferred Glue type (the type came from ClassifyText over the
// same values, so every value parses as its kind).
Result<std::shared_ptr<arrow::Array>> ConvertText(const std::shared_ptr<arrow::Array>& column,
                                                  const std::shared_ptr<arrow::DataType>& type) {
  if (type->id() == arrow::Type::STRING) return column;
  const auto& strings = static_cast<const arrow::StringArray&>(*column);
  const int64_t n = strings.length();
  auto fail = [](const arrow::Status& st) { return Status::Internal(st.ToString()); };
  if (type->id() == arrow::Type::NA) return arrow::MakeArrayOfNull(type, n).ValueOrDie();
  auto number_type = type->id() == arrow::Type::DENSE_UNION
                         ? type->field(type->field(0)->type()->id() == arrow::Type::STRING ? 1 : 0)->type()
                         : type;
  const bool is_union = type->id() == arrow::Type::DENSE_UNION;
  // Numbers (and, for a choice, the non-numbers) split out.
  std::unique_ptr<arrow::ArrayBuilder> nb;
  auto st = arrow::MakeBuilder(arrow::default_memory_pool(), number_type, &nb);
  if (!st.ok()) return fail(st);
  OG_RETURN_NOT_OK(nb->Reserve(n).ok() ? Status::OK() : Status::Internal("out of memory"));
  arrow::StringBuilder sb;
  std::vector<int8_t> ids;
  std::vector<int32_t> offsets;
  int32_t n_numbers = 0, n_strings = 0;
  if (is_union) {
    ids.resize(n);
    offsets.resize(n);
  }
  const auto number_id = number_type->id();
  const bool string_first = is_union && type->field(0)->type()->id() == arrow::Type::STRING;
  const int8_t number_code = string_first ? 1 : 0, string_code = string_first ? 0 : 1;
  for (int64_t i = 0; i < n; ++i) {
    bool is_number = false;
    std::string_view text;
    if (!strings.IsNull(i)) {
      text = strings.GetView(i);
      if (number_id == arrow::Type::DOUBLE) {
        double d;
        if (ParseDoubleText(text, &d) || [&] {
              int64_t x;
              if (!ParseInt64Text(text, &x)) return false;
              d = static_cast<double>(x);
              return true;
            }()) {
          st = static_cast<arrow::DoubleBuilder*>(nb.get())->Append(d);
          is_number = true;
        } else if (ClassifyText(text) == TextKind::kDouble) {
          // An integer beyond long: its double value.
          st = static_cast<arrow::DoubleBuilder*>(nb.get())->Append(std::strtod(std::string(text).c_str(), nullptr));
          is_number = true;
        }
      } else {
        int64_t x;
        if (ParseInt64Text(text, &x)) {
          if (number_id == arrow::Type::INT64) {
            st = static_cast<arrow::Int64Builder*>(nb.get())->Append(x);
          } else {
            st = static_cast<arrow::Int32Builder*>(nb.get())->Append(static_cast<int32_t>(x));
          }
          is_number = true;
        }
      }
      if (!is_number) {
        if (is_union) {
          st = sb.Append(text);
          ids[i] = string_code;
          offsets[i] = n_strings++;
        } else {
          st = nb->AppendNull();
        }
        if (!st.ok()) return fail(st);
        continue;
      }
    } else {
      st = nb->AppendNull();
    }
    if (!st.ok()) return fail(st);
    if (is_union) {
      ids[i] = number_code;
      offsets[i] = n_numbers++;
    }
  }
  std::shared_ptr<arrow::Array> numbers;
  st = nb->Finish(&numbers);
  if (!st.ok()) return fail(st);
  if (!is_union) return numbers;
  std::shared_ptr<arrow::Array> texts;
  st = sb.Finish(&texts);
  if (!st.ok()) return fail(st);
  auto ids_buffer = arrow::Buffer::FromVector(std::move(ids));
  auto offsets_buffer = arrow::Buffer::FromVector(std::move(offsets));
  auto data = arrow::ArrayData::Make(type, n, {nullptr, ids_buffer, offsets_buffer}, 0);
  data->child_data = string_first ? std::vector{texts->data(), numbers->data()}
                                  : std::vector{numbers->data(), texts->data()};
  return arrow::MakeArray(data);
}

// ---- JSON -----------------------------------------------------------------------------------

class JsonProducer {
 public:
  JsonProducer(std::shared_ptr<const ScanState> state, int64_t batch_rows)
      : state_(std::move(state)),
        chunk_bytes_(std::clamp<int64_t>(batch_rows * 16, 1 << 16, 4 << 20)),
        batch_rows_(std::max<int64_t>(batch_rows, 1)) {}

  Result<std::optional<RawItem>> operator()() {
    while (true) {
      if (file_ >= state_->files.size()) return std::optional<RawItem>();
      const std::string& uri = state_->files[file_];
      if (!input_) {
        OG_ASSIGN_OR_RETURN(input_, OpenText(*state_, uri));
        carry_.clear();
        line_ = 1;
        pending_.clear();
        whole_.reset();
      }
      if (state_->multiline) {
        if (!whole_) {
          // A multi-line file is split into values as a whole (the file is held in memory).
          auto text = std::make_shared<std::string>();
          while (true) {
            auto buffer = input_->Read(16 << 20);
            if (!buffer.ok()) return FileError(uri, buffer.status());
            if ((*buffer)->size() == 0) break;
            text->append(reinterpret_cast<const char*>((*buffer)->data()), (*buffer)->size());
          }
          whole_ = text;
          bool split_root = state_->json_path.kind != JsonPath::Kind::kFieldArray;
          Status st = SplitJsonValues(*whole_, split_root, &pending_);
          if (!st.ok()) return FileError(uri, st.message());
          next_ = 0;
        }
        if (next_ < pending_.size()) {
          RawItem item;
          item.file = file_;
          item.text = whole_;
          size_t end = std::min(pending_.size(), next_ + static_cast<size_t>(batch_rows_));
          item.values.assign(pending_.begin() + next_, pending_.begin() + end);
          next_ = end;
          return std::optional<RawItem>(std::move(item));
        }
        input_.reset();
        ++file_;
        continue;
      }
      // JSON lines: read a chunk, hand out its complete lines, carry the rest.
      auto buffer = input_->Read(chunk_bytes_);
      if (!buffer.ok()) return FileError(uri, buffer.status());
      auto text = std::make_shared<std::string>(std::move(carry_));
      carry_.clear();
      bool at_end = (*buffer)->size() == 0;
      text->append(reinterpret_cast<const char*>((*buffer)->data()), (*buffer)->size());
      if (!at_end) {
        size_t last = text->rfind('\n');
        if (last == std::string::npos) {
          carry_ = std::move(*text);
          continue;
        }
        carry_ = text->substr(last + 1);
        text->resize(last + 1);
      }
      if (text->empty() && at_end) {
        input_.reset();
        ++file_;
        continue;
      }
      RawItem item;
      item.file = file_;
      item.lines = true;
      item.first_line = line_;
      item.text = text;
      std::string_view all(*text);
      size_t start = 0;
      while (start < all.size()) {
        size_t end = all.find('\n', start);
        if (end == std::string_view::npos) end = all.size();
        item.values.push_back(all.substr(start, end - start));
        ++line_;
        start = end + 1;
      }
      if (at_end) {
        input_.reset();
        ++file_;
      }
      return std::optional<RawItem>(std::move(item));
    }
  }

 private:
  std::shared_ptr<const ScanState> state_;
  int64_t chunk_bytes_;
  int64_t batch_rows_;
  size_t file_ = 0;
  std::shared_ptr<arrow::io::InputStream> input_;
  std::string carry_;
  int64_t line_ = 1;
  std::shared_ptr<const std::string> whole_;
  std::vector<std::string_view> pending_;
  size_t next_ = 0;
};

std::string_view TrimJson(std::string_view text) {
  while (!text.empty() && std::isspace(static_cast<unsigned char>(text.back()))) text.remove_suffix(1);
  while (!text.empty() && std::isspace(static_cast<unsigned char>(text.front()))) text.remove_prefix(1);
  return text;
}

// `keep_bad`: record the bad records of a collecting scan (the streams do; the schema's
// inference pass only skips them, so each is recorded once).
Result<std::vector<JsonValue>> ParseJsonItem(const ScanState& state, const RawItem& item,
                                             bool keep_bad) {
  std::vector<JsonValue> records;
  const std::string& uri = state.files[item.file];
  // At most kMaxBadRecords are kept per scan (each with at most 64 KiB of its text), so a file
  // of garbage cannot make the read hold it all: past that the read fails, naming the file.
  constexpr size_t kMaxBadRecords = 10000;
  auto keep = [&](int64_t line, const Status& st, std::string_view text) -> Status {
    if (!keep_bad) return Status::OK();
    BadRecord bad{uri, line, st.message(), std::string(text.substr(0, 65536))};
    MutexLock lock(&state.bad_mu);
    auto key = std::make_pair(item.file, line);
    if (state.bad.size() >= kMaxBadRecords && state.bad.count(key) == 0)
      return FileError(uri, "more than " + std::to_string(kMaxBadRecords) +
                                " malformed JSON records; the read stops at line " +
                                std::to_string(line) + ": " + st.message());
    state.bad.emplace(key, std::move(bad));
    return Status::OK();
  };
  for (size_t i = 0; i < item.values.size(); ++i) {
    std::string_view text = item.values[i];
    if (item.lines) {
      text = TrimJson(text);
      if (text.empty()) continue;
    }
    size_t before = records.size();
    Status st = ParseJsonRecords(text, state.json_path, &records);
    if (st.ok()) continue;
    records.resize(before);
    int64_t line = item.lines ? item.first_line + static_cast<int64_t>(i) : 0;
    if (!state.collect_bad) {
      std::string where = item.lines ? "line " + std::to_string(line) + ": " : "";
      return FileError(uri, "invalid JSON: " + where + st.message());
    }
    if (!item.lines) {
      OG_RETURN_NOT_OK(keep(line, st, text));
      continue;
    }
    // A record that ends before it closes goes on on the next line, as a streaming JSON parser
    // reads it (Glue's does): it is one good record over several lines, or one bad record that
    // ends where the parser fails.
    std::string joined(text);
    size_t j = i;
    while (st.message().find("unexpected end of input") != std::string::npos &&
           j + 1 < item.values.size() && joined.size() < (1 << 20)) {
      ++j;
      joined += '\n';
      joined += TrimJson(item.values[j]);
      records.resize(before);
      st = ParseJsonRecords(joined, state.json_path, &records);
      if (st.ok()) break;
    }
    if (!st.ok()) {
      records.resize(before);
      OG_RETURN_NOT_OK(keep(line, st, joined));
    }
    i = j;
  }
  return records;
}

// ---- Parquet and ORC ------------------------------------------------------------------------

class ColumnarFile {
 public:
  virtual ~ColumnarFile() = default;
  virtual Result<std::shared_ptr<arrow::Schema>> Schema() = 0;
  virtual Result<std::shared_ptr<arrow::RecordBatchReader>> Batches(int64_t batch_rows) = 0;
};

class ParquetFile : public ColumnarFile {
 public:
  static Result<std::unique_ptr<ColumnarFile>> Open(const ScanState& state, const std::string& uri) {
    OG_ASSIGN_OR_RETURN(auto file, OpenRandom(state, uri));
    // The footer's declared sizes checked before Arrow allocates them.
    Result<storage::FooterCost> checked = storage::CheckParquetFooter(file.get());
    if (!checked.ok()) return FileError(uri, "not a valid Parquet file: " + checked.status().message());
    auto out = std::make_unique<ParquetFile>();
    out->uri_ = uri;
    try {
      auto reader = parquet::arrow::OpenFile(file, arrow::default_memory_pool());
      if (!reader.ok()) return FileError(uri, "not a valid Parquet file: " + reader.status().message());
      out->reader_ = std::move(*reader);
    } catch (const std::exception& e) {
      return FileError(uri, std::string("not a valid Parquet file: ") + e.what());
    }
    return std::unique_ptr<ColumnarFile>(std::move(out));
  }
  Result<std::shared_ptr<arrow::Schema>> Schema() override {
    std::shared_ptr<arrow::Schema> schema;
    try {
      auto st = reader_->GetSchema(&schema);
      if (!st.ok()) return FileError(uri_, "not a valid Parquet file: " + st.message());
    } catch (const std::exception& e) {
      return FileError(uri_, std::string("not a valid Parquet file: ") + e.what());
    }
    return schema->RemoveMetadata();
  }
  Result<std::shared_ptr<arrow::RecordBatchReader>> Batches(int64_t batch_rows) override {
    try {
      reader_->set_batch_size(batch_rows);
      auto batches = reader_->GetRecordBatchReader();
      if (!batches.ok()) return FileError(uri_, batches.status());
      return std::shared_ptr<arrow::RecordBatchReader>(std::move(*batches));
    } catch (const std::exception& e) {
      return FileError(uri_, e.what());
    }
  }

 private:
  std::string uri_;
  std::unique_ptr<parquet::arrow::FileReader> reader_;
};

class OrcFile : public ColumnarFile {
 public:
  static Result<std::unique_ptr<ColumnarFile>> Open(const ScanState& state, const std::string& uri) {
    OG_ASSIGN_OR_RETURN(auto file, OpenRandom(state, uri));
    Result<storage::FooterCost> checked = storage::CheckOrcFooter(file.get());
    if (!checked.ok()) return FileError(uri, "not a valid ORC file: " + checked.status().message());
    auto out = std::make_unique<OrcFile>();
    out->uri_ = uri;
    try {
      auto reader = arrow::adapters::orc::ORCFileReader::Open(file, arrow::default_memory_pool());
      if (!reader.ok()) return FileError(uri, "not a valid ORC file: " + reader.status().message());
      out->reader_ = std::move(*reader);
    } catch (const std::exception& e) {
      return FileError(uri, std::string("not a valid ORC file: ") + e.what());
    }
    return std::unique_ptr<ColumnarFile>(std::move(out));
  }
  Result<std::shared_ptr<arrow::Schema>> Schema() override {
    try {
      auto schema = reader_->ReadSchema();
      if (!schema.ok()) return FileError(uri_, "not a valid ORC file: " + schema.status().message());
      return (*schema)->RemoveMetadata();
    } catch (const std::exception& e) {
      return FileError(uri_, std::string("not a valid ORC file: ") + e.what());
    }
  }
  Result<std::shared_ptr<arrow::RecordBatchReader>> Batches(int64_t batch_rows) override {
    try {
      auto batches = reader_->GetRecordBatchReader(batch_rows, {});
      if (!batches.ok()) return FileError(uri_, batches.status());
      return *batches;
    } catch (const std::exception& e) {
      return FileError(uri_, e.what());
    }
  }

 private:
  std::string uri_;
  std::unique_ptr<arrow::adapters::orc::ORCFileReader> reader_;
};

Result<std::unique_ptr<ColumnarFile>> OpenColumnar(const ScanState& state, const std::string& uri) {
  if (state.format == Format::kParquet) return ParquetFile::Open(state, uri);
  return OrcFile::Open(state, uri);
}

class ColumnarProducer {
 public:
  ColumnarProducer(std::shared_ptr<const ScanState> state, int64_t batch_rows)
      : state_(std::move(state)), batch_rows_(batch_rows) {}

  Result<std::optional<RawItem>> operator()() {
    while (true) {
      if (!batches_) {
        if (file_ >= state_->files.size()) return std::optional<RawItem>();
        OG_ASSIGN_OR_RETURN(file_reader_, OpenColumnar(*state_, state_->files[file_]));
        OG_ASSIGN_OR_RETURN(batches_, file_reader_->Batches(batch_rows_));
      }
      std::shared_ptr<arrow::RecordBatch> batch;
      arrow::Status st;
      try {
        st = batches_->ReadNext(&batch);
      } catch (const std::exception& e) {
        st = arrow::Status::Invalid(e.what());
      }
      if (!st.ok()) return FileError(state_->files[file_], st);
      if (batch == nullptr) {
        batches_.reset();
        file_reader_.reset();
        ++file_;
        continue;
      }
      RawItem item;
      item.file = file_;
      item.batch = std::move(batch);
      return std::optional<RawItem>(std::move(item));
    }
  }

 private:
  std::shared_ptr<const ScanState> state_;
  int64_t batch_rows_;
  size_t file_ = 0;
  std::unique_ptr<ColumnarFile> file_reader_;
  std::shared_ptr<arrow::RecordBatchReader> batches_;
};

std::function<Result<std::optional<RawItem>>()> MakeProducer(std::shared_ptr<const ScanState> state,
                                                            int64_t batch_rows) {
  // std::function needs a copyable target: the producers are shared (called under a lock).
  switch (state->format) {
    case Format::kCsv: {
      auto p = std::make_shared<CsvProducer>(std::move(state), batch_rows);
      return [p] { return (*p)(); };
    }
    case Format::kJson: {
      auto p = std::make_shared<JsonProducer>(std::move(state), batch_rows);
      return [p] { return (*p)(); };
    }
    default: {
      auto p = std::make_shared<ColumnarProducer>(std::move(state), batch_rows);
      return [p] { return (*p)(); };
    }
  }
}

// ---- the stream -----------------------------------------------------------------------------

using BatchMap = OrderedParallelMap<RawItem, std::shared_ptr<arrow::RecordBatch>>;

class ScanReader : public arrow::RecordBatchReader {
 public:
  ScanReader(std::shared_ptr<arrow::Schema> schema, std::unique_ptr<BatchMap> map)
      : schema_(std::move(schema)), map_(std::move(map)) {}
  std::shared_ptr<arrow::Schema> schema() const override { return schema_; }
  arrow::Status ReadNext(std::shared_ptr<arrow::RecordBatch>* batch) override {
    if (!map_) {
      *batch = nullptr;
      return arrow::Status::OK();
    }
    auto next = map_->Next();
    if (!next.ok()) return arrow::Status::Invalid(next.status().message());
    *batch = next->has_value() ? std::move(**next) : nullptr;
    if (*batch == nullptr) map_.reset();  // done: stop the workers now
    return arrow::Status::OK();
  }
  arrow::Status Close() override {
    map_.reset();
    return arrow::Status::OK();
  }

 private:
  std::shared_ptr<arrow::Schema> schema_;
  std::unique_ptr<BatchMap> map_;
};

}  // namespace

// ---- Scan -----------------------------------------------------------------------------------

Scan::Scan(std::shared_ptr<ScanState> state) : state_(std::move(state)) {}
Scan::~Scan() = default;

std::vector<BadRecord> Scan::BadRecords() const {
  MutexLock lock(&state_->bad_mu);
  std::vector<BadRecord> out;
  for (const auto& [key, bad] : state_->bad) out.push_back(bad);
  return out;
}

Result<std::unique_ptr<Scan>> Scan::Make(std::vector<std::string> files, const std::string& format,
                                         Options options, storage::StorageOptions storage) {
  auto state = std::make_shared<ScanState>();
  std::string f = ToLower(Trim(format));
  if (f == "csv") {
    state->format = Format::kCsv;
  } else if (f == "json") {
    state->format = Format::kJson;
  } else if (f == "parquet" || f == "glueparquet") {
    state->format = Format::kParquet;
  } else if (f == "orc") {
    state->format = Format::kOrc;
  } else {
    return Status::InvalidInput("format " + SanitizeUtf8(TruncateUtf8(format, 100)) +
                                " is not supported by the embedded engine");
  }
  state->files = std::move(files);
  state->options = std::move(options);
  state->storage = std::move(storage);
  state->threads = WorkerThreads();
  const Options& o = state->options;
  auto one_char = [&](const std::string& key, char fallback, char* out) -> Status {
    auto it = o.find(key);
    if (it == o.end() || it->second.empty()) {
      *out = fallback;
      return Status::OK();
    }
    std::string v = it->second;
    if (v == "\\t") v = "\t";
    if (v.size() != 1) {
      return Status::InvalidInput("format option " + key + " must be one character, not '" +
                                  SanitizeUtf8(TruncateUtf8(v, 50)) + "'");
    }
    *out = v[0];
    return Status::OK();
  };
  if (state->format == Format::kCsv) {
    OG_RETURN_NOT_OK(one_char("separator", ',', &state->parse.delimiter));
    std::string quote = Option(o, "quoteChar");
    if (quote == "-1") {
      state->parse.quoting = false;
    } else {
      OG_RETURN_NOT_OK(one_char("quoteChar", '"', &state->parse.quote_char));
    }
    if (!Option(o, "escaper").empty()) {
      state->parse.escaping = true;
      OG_RETURN_NOT_OK(one_char("escaper", '\\', &state->parse.escape_char));
    }
    state->parse.newlines_in_values = Truthy(o, "multiLine", false);
    state->parse.ignore_empty_lines = true;
    state->with_header = Truthy(o, "withHeader", false);
    state->skip_first = Truthy(o, "skipFirst", false);
  } else if (state->format == Format::kJson) {
    OG_ASSIGN_OR_RETURN(state->json_path, ParseJsonPath(Option(o, "jsonPath")));
    state->multiline = Truthy(o, "multiLine", false) ||
                       state->json_path.kind != JsonPath::Kind::kNone;
    state->collect_bad = Option(o, "openglue.badRecords") == "collect";
  }
  return std::unique_ptr<Scan>(new Scan(std::move(state)));
}

Result<std::shared_ptr<arrow::Schema>> Scan::RawSchema() {
  if (state_->format != Format::kCsv) return Schema();
  std::shared_ptr<arrow::Schema> merged = arrow::schema({});
  for (const auto& uri : state_->files) {
    OG_ASSIGN_OR_RETURN(auto reader, OpenCsv(*state_, uri, 1 << 14));
    if (!reader) continue;
    merged = MergeSchemas(merged, CsvSchema(*state_, reader->schema()));
  }
  return merged;
}

Result<std::shared_ptr<arrow::Schema>> Scan::Schema() {
  {
    MutexLock lock(&mu_);
    if (schema_) return schema_;
  }
  std::shared_ptr<const ScanState> state = state_;
  std::shared_ptr<arrow::Schema> schema = arrow::schema({});
  if (state->format == Format::kParquet || state->format == Format::kOrc) {
    for (const auto& uri : state->files) {
      OG_ASSIGN_OR_RETURN(auto file, OpenColumnar(*state, uri));
      OG_ASSIGN_OR_RETURN(auto file_schema, file->Schema());
      schema = MergeSchemas(schema, file_schema);
    }
  } else if (state->format == Format::kCsv) {
    // Per column (by name): what its values look like, merged in file order.
    using Stats = std::vector<std::pair<std::string, TextColumnStats>>;
    OrderedParallelMap<RawItem, Stats> map(
        MakeProducer(state, 65536),
        [state](RawItem item) -> Result<Stats> {
          OG_ASSIGN_OR_RETURN(auto batch, CsvBatch(*state, item));
          Stats stats;
          for (int c = 0; c < batch->num_columns(); ++c) {
            stats.emplace_back(batch->schema()->field(c)->name(), ClassifyTextArray(*batch->column(c)));
          }
          return stats;
        },
        state->threads, 2 * state->threads);
    std::vector<std::string> order;
    std::map<std::string, TextColumnStats> columns;
    // Files without rows still contribute their header's columns.
    OG_ASSIGN_OR_RETURN(auto raw, RawSchema());
    for (const auto& field : raw->fields()) {
      order.push_back(field->name());
      columns[field->name()];
    }
    while (true) {
      OG_ASSIGN_OR_RETURN(auto next, map.Next());
      if (!next) break;
      for (auto& [name, stats] : *next) {
        auto [it, inserted] = columns.try_emplace(name, stats);
        if (inserted) {
          order.push_back(name);
        } else {
          it->second.Merge(stats);
        }
      }
    }
    arrow::FieldVector fields;
    for (const auto& name : order) fields.push_back(arrow::field(name, columns[name].ToType()));
    schema = arrow::schema(std::move(fields));
  } else {
    OrderedParallelMap<RawItem, std::shared_ptr<arrow::DataType>> map(
        MakeProducer(state, 65536),
        [state](RawItem item) -> Result<std::shared_ptr<arrow::DataType>> {
          OG_ASSIGN_OR_RETURN(auto records, ParseJsonItem(*state, item, false));
          return InferRecordsType(records);
        },
        state->threads, 2 * state->threads);
    std::shared_ptr<arrow::DataType> type = arrow::struct_({});
    while (true) {
      OG_ASSIGN_OR_RETURN(auto next, map.Next());
      if (!next) break;
      type = MergeTypes(type, *next);
    }
    schema = arrow::schema(type->fields());
  }
  MutexLock lock(&mu_);
  schema_ = schema;
  return schema;
}

namespace {

// The text columns of `batch` that `target` declares as a choice, read per value
// (CastTextPerValue); the other columns as they are (Conform casts them).
Result<std::shared_ptr<arrow::RecordBatch>> TextChoices(std::shared_ptr<arrow::RecordBatch> batch,
                                                        const arrow::Schema& target) {
  for (const auto& field : target.fields()) {
    if (field->type()->id() != arrow::Type::DENSE_UNION) continue;
    const int c = batch->schema()->GetFieldIndex(field->name());
    if (c < 0 || batch->column(c)->type_id() != arrow::Type::STRING) continue;
    OG_ASSIGN_OR_RETURN(auto column, CastTextPerValue(batch->column(c), field->type()));
    auto replaced = batch->SetColumn(c, arrow::field(field->name(), column->type()), column);
    if (!replaced.ok()) return Status::Internal(replaced.status().ToString());
    batch = *replaced;
  }
  return batch;
}

}  // namespace

Result<std::vector<std::string>> Scan::TextLosses(std::shared_ptr<arrow::Schema> schema) {
  std::shared_ptr<const ScanState> state = state_;
  if (state->format != Format::kCsv) {
    return Status::InvalidInput("text_losses: only CSV files hold text to type");
  }
  using Losses = std::vector<bool>;
  OrderedParallelMap<RawItem, Losses> map(
      MakeProducer(state, 65536),
      [state, schema](RawItem item) -> Result<Losses> {
        OG_ASSIGN_OR_RETURN(auto batch, CsvBatch(*state, item));
        Losses losses(static_cast<size_t>(schema->num_fields()), false);
        for (int f = 0; f < schema->num_fields(); ++f) {
          const int c = batch->schema()->GetFieldIndex(schema->field(f)->name());
          if (c < 0) continue;
          OG_ASSIGN_OR_RETURN(int64_t lost, TextCastLosses(batch->column(c), schema->field(f)->type()));
          losses[static_cast<size_t>(f)] = lost > 0;
        }
        return losses;
      },
      state->threads, 2 * state->threads);
  Losses any(static_cast<size_t>(schema->num_fields()), false);
  while (true) {
    OG_ASSIGN_OR_RETURN(auto next, map.Next());
    if (!next) break;
    for (size_t f = 0; f < any.size(); ++f) any[f] = any[f] || (*next)[f];
  }
  std::vector<std::string> names;
  for (size_t f = 0; f < any.size(); ++f) {
    if (any[f]) names.push_back(schema->field(static_cast<int>(f))->name());
  }
  return names;
}

Result<std::shared_ptr<arrow::RecordBatchReader>> Scan::Stream(std::shared_ptr<arrow::Schema> target,
                                                              int64_t batch_rows) {
  if (batch_rows <= 0) batch_rows = 65536;
  std::shared_ptr<const ScanState> state = state_;
  const bool given = target != nullptr;
  if (!given) {
    OG_ASSIGN_OR_RETURN(target, Schema());
  }
  BatchMap::Fn fn;
  if (given) {
    if (state->format == Format::kJson) {
      fn = [state, target](RawItem item) -> Result<std::shared_ptr<arrow::RecordBatch>> {
        OG_ASSIGN_OR_RETURN(auto records, ParseJsonItem(*state, item, true));
        auto local = arrow::schema(InferRecordsType(records)->fields());
        OG_ASSIGN_OR_RETURN(auto batch, BuildJsonBatch(records, local));
        return Conform(batch, target);
      };
    } else if (state->format == Format::kCsv) {
      fn = [state, target](RawItem item) -> Result<std::shared_ptr<arrow::RecordBatch>> {
        OG_ASSIGN_OR_RETURN(auto batch, CsvBatch(*state, item));
        OG_ASSIGN_OR_RETURN(batch, TextChoices(batch, *target));
        return Conform(batch, target);
      };
    } else {
      fn = [target](RawItem item) { return Conform(item.batch, target); };
    }
  } else if (state->format == Format::kCsv) {
    fn = [state, target](RawItem item) -> Result<std::shared_ptr<arrow::RecordBatch>> {
      OG_ASSIGN_OR_RETURN(auto batch, CsvBatch(*state, item));
      std::vector<std::shared_ptr<arrow::Array>> columns;
      arrow::FieldVector fields;
      for (int c = 0; c < batch->num_columns(); ++c) {
        auto field = target->GetFieldByName(batch->schema()->field(c)->name());
        if (field == nullptr) continue;
        OG_ASSIGN_OR_RETURN(auto column, ConvertText(batch->column(c), field->type()));
        columns.push_back(std::move(column));
        fields.push_back(field);
      }
      auto typed = arrow::RecordBatch::Make(arrow::schema(fields), batch->num_rows(), columns);
      return AlignBatch(typed, target);
    };
  } else if (state->format == Format::kJson) {
    fn = [state, target](RawItem item) -> Result<std::shared_ptr<arrow::RecordBatch>> {
      OG_ASSIGN_OR_RETURN(auto records, ParseJsonItem(*state, item, true));
      return BuildJsonBatch(records, target);
    };
  } else {
    fn = [state, target](RawItem item) -> Result<std::shared_ptr<arrow::RecordBatch>> {
      auto aligned = AlignBatch(item.batch, target);
      if (!aligned.ok()) return FileError(state->files[item.file], aligned.status().message());
      return aligned;
    };
  }
  auto map = std::make_unique<BatchMap>(MakeProducer(state, batch_rows), std::move(fn),
                                        state->threads, 2 * state->threads);
  return std::shared_ptr<arrow::RecordBatchReader>(
      std::make_shared<ScanReader>(target, std::move(map)));
}

}  // namespace openglue::engine
