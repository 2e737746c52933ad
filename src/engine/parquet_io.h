// Parquet files on the local filesystem, read into and written from Arrow tables.
//
// This is the engine's lowest format layer: a whole table in, a whole table out. Object paths
// (s3://, file://) are resolved by the storage module before they reach here; these functions
// take a plain local path (absolute, or relative to the working directory).
//
// Errors never arrive as exceptions: every Arrow or Parquet failure, and any exception thrown
// underneath, comes back as an openglue Status whose message names the path.
//
// Both functions are thread-safe: they share no state, and concurrent calls on different paths
// do not interact. Concurrent writes to the same path each leave a complete file; the last one
// to finish wins.
#pragma once

#include <memory>
#include <string>

#include <arrow/type_fwd.h>

#include "common/status.h"

namespace openglue::engine {

// Writes `table` to `path` as one Parquet file (Snappy-compressed, with the Arrow schema
// stored in the file so types such as timestamp time zones read back exactly).
//
// Missing parent directories are created, as an S3 key needs no directory. The write is atomic:
// the data goes to a hidden temporary file beside `path` (".<name>.<pid>-<n>.tmp", which
// readers of a folder skip by the Hadoop/Spark convention) and is renamed over `path` only when
// complete, so a reader sees either the previous file or the new one, never a partial file.
// An existing file at `path` is replaced.
//
// Returns InvalidInput if `table` is null, `path` is empty or names a directory, or the table
// holds a type Parquet cannot store; Internal for any other failure (I/O, out of memory), in
// which case `path` is left as it was.
Status WriteParquet(const std::shared_ptr<arrow::Table>& table, const std::string& path);

// Reads the whole Parquet file at `path` into a table. The caller owns the result (Arrow
// buffers are immutable and may be shared freely between threads).
//
// Returns InvalidInput if `path` does not exist, is a directory, or is not a readable Parquet
// file (bad magic bytes, truncated, corrupt pages, unsupported encoding); Internal for any
// other failure (the file cannot be opened, out of memory).
Result<std::shared_ptr<arrow::Table>> ReadParquet(const std::string& path);

}  // namespace openglue::engine
