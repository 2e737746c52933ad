// Reading Glue sources: listing files under paths, and scanning CSV, JSON, Parquet and ORC files
// (plain, gzip, bzip2 or zstd; local or s3://) into Glue-typed Arrow record batches.
//
// A Scan is a description of files plus options; nothing is read until Schema(), RawSchema() or
// Stream() is called. Inference (CSV and JSON) is a full pass in bounded memory: batches are
// classified on worker threads and dropped. Stream() decodes and converts batches on worker
// threads, in file order, with a bounded number of batches in flight, so an input larger than
// memory streams through.
//
// Errors are Status values whose message starts with the file's uri (as the user wrote it) and
// says what is wrong; a stream reports them from ReadNext as arrow::Status::Invalid with the same
// message. Scan methods may be called from several threads; the streams they return are
// independent of the Scan (they keep what they need alive) and are used from one thread.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include <arrow/type_fwd.h>

#include "common/glob.h"
#include "common/status.h"
#include "common/thread_annotations.h"
#include "storage/arrow_fs.h"

namespace openglue::engine {

using Options = std::map<std::string, std::string>;

struct ListedFile {
  std::string uri;
  int64_t size = 0;
  int64_t mtime_ms = 0;
};

// The files under `paths` (each a file or a prefix/folder), sorted by uri. Options: `recurse`
// ("false" lists only a folder's direct files; default true), `exclusions` (a JSON list of Glue
// globs matched against the full uri: `*` within a path segment, `**` across, `?`, `[abc]`,
// `{a,b}`). Files whose name or a folder below the given path starts with `_` or `.` are hidden
// and skipped. InvalidInput naming the path when it does not exist or cannot be resolved, or
// when `exclusions` is not a JSON list of strings.
Result<std::vector<ListedFile>> ListFiles(const std::vector<std::string>& paths,
                                          const Options& options,
                                          const storage::StorageOptions& storage);

// Glue globs: the one matcher in common/glob.h (kept reachable by its engine name).
using ::openglue::GlobMatches;
using ::openglue::kMaxGlobLength;

enum class Format { kCsv, kJson, kParquet, kOrc };

struct ScanState;

// A JSON record that does not parse, kept when the scan collects bad records (the format option
// "openglue.badRecords" "collect"): the read goes on without it, as Glue's does, and the
// runtime makes it an error record of the frame (errorsCount, errorsAsDynamicFrame).
struct BadRecord {
  std::string source;   // the file
  int64_t line = 0;     // JSON lines: its first line (1-based); 0 for a multi-line file's value
  std::string message;  // the parser's
  std::string input;    // its text (at most 64 KiB)
};

class Scan {
 public:
  // InvalidInput for an unknown or unsupported format ("format avro is not supported by the
  // embedded engine") or invalid options (a separator of more than one character, ...).
  static Result<std::unique_ptr<Scan>> Make(std::vector<std::string> files, const std::string& format,
                                            Options options, storage::StorageOptions storage);
  ~Scan();

  // The Glue-typed schema of all rows (cached after the first call).
  Result<std::shared_ptr<arrow::Schema>> Schema() EXCLUDES(mu_);
  // CSV: every column string, in first-appearance order over the files; else Schema().
  Result<std::shared_ptr<arrow::Schema>> RawSchema();
  // Glue-typed rows (schema == nullptr; infers first when needed), or every batch conformed
  // to `schema` with Conform (no inference pass).
  Result<std::shared_ptr<arrow::RecordBatchReader>> Stream(std::shared_ptr<arrow::Schema> schema,
                                                          int64_t batch_rows = 65536);
  // CSV only: the non-string fields of `schema` (named as the files' columns) that hold a value
  // their type cannot take (TextCastLosses), in `schema`'s order. One pass over the files. A
  // stream given a schema with choice(T, string) for such a field reads it per value
  // (CastTextPerValue): Glue's typing of a catalog CSV table's cells.
  Result<std::vector<std::string>> TextLosses(std::shared_ptr<arrow::Schema> schema);
  // The bad records that the streams so far skipped, in file and line order, each once however
  // often the files were streamed. Thread-safe.
  std::vector<BadRecord> BadRecords() const;

 private:
  explicit Scan(std::shared_ptr<ScanState> state);
  std::shared_ptr<ScanState> state_;
  Mutex mu_;
  std::shared_ptr<arrow::Schema> schema_ GUARDED_BY(mu_);
};

}  // namespace openglue::engine
