// Writing record batch streams as files (Glue's S3 sink): csv, json lines, parquet, orc, with
// Hive-style partition folders, and deleting under a prefix (purge_s3_path).
//
// Files are named `part-<5 digits>-<run uuid>[.<codec>].<ext>` as Spark/Glue name them
// (part-00000-1b2c....snappy.parquet; csv/json compression as a suffix: part-00000-<uuid>.csv.gz).
// Each file is written to a hidden temporary name beside it (".og-tmp.<name>", skipped by every
// reader of a folder and refused as a key by the embedded store) and renamed when complete, so a
// reader never sees a partial file. On an S3 endpoint the multipart upload is itself atomic (the
// object appears only when complete) and the file is written under its final name. If the write
// fails, the files this call already completed are deleted again (best effort) and the error
// names the file concerned.
//
// Memory is bounded: one open file per partition value; a partition's file is rolled after
// `maxRecordsPerFile` rows or about `maxFileBytes` bytes of input; at most `maxOpenFiles` files are
// open (the least recently used is closed; its partition gets a new file if more rows come).
// Parquet data is held per file as Arrow batches and encoded as one row group when the file has
// ~128 MiB of input, when all open files together hold more than 128 MiB (the largest are cut
// until half of that remains), or when the file closes. Batches are split, converted and encoded
// on a pool of worker threads (one per core), each file owned by one task at a time, while the
// next batch is read; files are finished in parallel too.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <arrow/record_batch.h>

#include "common/random.h"
#include "common/status.h"
#include "storage/arrow_fs.h"

namespace openglue::engine {

// Limits of one Write (options may override the first three by name).
struct WriteLimits {
  int64_t max_records_per_file = 0;            // "maxRecordsPerFile"; 0 = no limit
  int64_t max_file_bytes = 1LL << 30;          // "maxFileBytes" (input bytes before rolling)
  int max_open_files = 64;                     // "maxOpenFiles"
  int64_t row_group_bytes = 128LL << 20;       // parquet row group cut (input bytes)
  int64_t buffered_bytes = 128LL << 20;        // all open parquet writers together
  int threads = 0;                             // 0 = one per core
};

// Writes every batch of `stream` under `path` (a folder: s3://b/out, file:///x, /x) in `format`
// (csv | json | parquet | glueparquet | orc). Options (strings, unknown ones ignored):
//   csv:      separator (default ","), quoteChar (default '"'; "-1" = never quote),
//             writeHeader (default true), compression (gzip | bzip2 | zstd | lz4 | none)
//   json:     compression (as csv); one JSON object per line, null fields omitted
//   parquet:  compression snappy (default) | gzip | zstd | lz4 | brotli | uncompressed | none
//   orc:      compression snappy (default) | zlib | zstd | lz4 | none
//   all:      maxRecordsPerFile, maxFileBytes, maxOpenFiles
// `partition_keys`: columns of the stream; rows go to <path>/<k1>=<v1>/<k2>=<v2>/ (values as
// Glue prints them, escaped as Hive does: %XX for '/', '=', ':', '%', control characters, ...;
// null or "" -> __HIVE_DEFAULT_PARTITION__); the key columns are not written inside the files.
// Choices (dense unions) are written as structs (csv: as the member's text).
// Returns the uris of the files written, in the order they were completed.
// Errors: InvalidInput for a bad format/option, a partition key the stream lacks, a path the
// storage refuses; Internal for I/O failures (the message names the file).
Result<std::vector<std::string>> Write(const std::shared_ptr<arrow::RecordBatchReader>& stream,
                                       std::string_view path, std::string_view format,
                                       const std::map<std::string, std::string>& options,
                                       const std::vector<std::string>& partition_keys,
                                       const storage::StorageOptions& storage,
                                       Random* random = nullptr, WriteLimits limits = {});

// Hive's partition path escaping of one value.
std::string EscapePartitionValue(std::string_view value);

// Deletes the files under `path` (a prefix folder, or one file), recursively. With
// `older_than_ms` (milliseconds since the epoch: purge_s3_path's now - retentionPeriod), only
// files last modified before that instant; files whose uri matches one of `exclusions` (Glue
// globs, see GlobMatches in scan.h) are kept. Returns the uris deleted. A missing path deletes
// nothing.
// On an S3 endpoint Arrow keeps the emptied "folder" as a marker object.
Result<std::vector<std::string>> DeletePrefix(std::string_view path,
                                              const storage::StorageOptions& storage,
                                              std::optional<int64_t> older_than_ms,
                                              const std::vector<std::string>& exclusions);

}  // namespace openglue::engine
