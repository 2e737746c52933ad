#include "engine/parquet_io.h"

#include <unistd.h>

#include <atomic>
#include <cctype>
#include <cerrno>
#include <cstdint>
#include <exception>
#include <filesystem>
#include <system_error>
#include <utility>

#include <arrow/filesystem/localfs.h>
#include <arrow/io/interfaces.h>
#include <arrow/memory_pool.h>
#include <arrow/result.h>
#include <arrow/status.h>
#include <arrow/table.h>
#include <arrow/util/io_util.h>
#include <parquet/arrow/reader.h>
#include <parquet/arrow/writer.h>
#include <parquet/properties.h>

namespace openglue::engine {
namespace {

Status Failure(StatusCode code, const std::string& what, const std::string& path,
               const std::string& detail) {
  std::string message = what + " '" + path + "'";
  if (!detail.empty()) message += ": " + detail;
  return Status(code, std::move(message));
}

Status ArrowFailure(StatusCode code, const std::string& what, const std::string& path,
                    const arrow::Status& status) {
  return Failure(code, what, path, status.ToString());
}

// A failure while decoding a file we could open means the file is not valid Parquet. Parquet
// reports corruption as IOError, Invalid or NotImplemented alike, so the code cannot tell it
// from a failing disk; a system error (one carrying an errno) and resource exhaustion are ours.
StatusCode ClassifyDecodeFailure(const arrow::Status& status) {
  if (status.IsOutOfMemory() || status.IsCancelled() || status.IsUnknownError()) {
    return StatusCode::kInternal;
  }
  if (arrow::internal::ErrnoFromStatus(status) != 0) return StatusCode::kInternal;
  return StatusCode::kInvalidInput;
}

// A write fails because of the table (a type Parquet cannot store) or because of the system.
StatusCode ClassifyEncodeFailure(const arrow::Status& status) {
  if (status.IsInvalid() || status.IsTypeError() || status.IsNotImplemented()) {
    return StatusCode::kInvalidInput;
  }
  return StatusCode::kInternal;
}

// "scheme://..." as in s3://bucket/key or file:///tmp/x.
bool LooksLikeUri(const std::string& path) {
  const size_t colon = path.find("://");
  if (colon == std::string::npos || colon == 0) return false;
  if (!std::isalpha(static_cast<unsigned char>(path[0]))) return false;
  for (size_t i = 1; i < colon; ++i) {
    const unsigned char c = static_cast<unsigned char>(path[i]);
    if (!std::isalnum(c) && c != '+' && c != '-' && c != '.') return false;
  }
  return true;
}

// Arrow's local filesystem is specified for absolute paths; resolve relative ones here once.
// A URI would otherwise be taken for a relative path and written under the working directory.
Result<std::string> AbsolutePath(const std::string& path, const std::string& what) {
  if (path.empty()) return Failure(StatusCode::kInvalidInput, what, path, "empty path");
  if (LooksLikeUri(path)) {
    return Failure(StatusCode::kInvalidInput, what, path,
                   "expected a local path, got a URI (the storage module resolves those)");
  }
  std::error_code ec;
  std::filesystem::path absolute = std::filesystem::absolute(path, ec);
  if (ec) return Failure(StatusCode::kInternal, what, path, ec.message());
  return absolute.lexically_normal().string();
}

// Unique among writers sharing a pid namespace: the pid separates processes, the counter calls.
std::string TemporaryPathFor(const std::filesystem::path& target) {
  static std::atomic<uint64_t> counter{0};
  std::string name = "." + target.filename().string() + "." + std::to_string(::getpid()) + "-" +
                     std::to_string(counter.fetch_add(1)) + ".tmp";
  return (target.parent_path() / name).string();
}

Status WriteParquetImpl(const std::shared_ptr<arrow::Table>& table, const std::string& path) {
  const std::string what = "cannot write Parquet file";
  if (table == nullptr) return Failure(StatusCode::kInvalidInput, what, path, "table is null");
  OG_ASSIGN_OR_RETURN(std::string target, AbsolutePath(path, what));
  const std::filesystem::path target_path(target);
  if (!target_path.has_filename()) {
    return Failure(StatusCode::kInvalidInput, what, path, "path names a directory");
  }
  // An invalid table (columns of unequal length, bad buffers) could crash the encoder.
  if (arrow::Status st = table->Validate(); !st.ok()) {
    return ArrowFailure(StatusCode::kInvalidInput, what, path, st);
  }

  arrow::fs::LocalFileSystem fs;
  arrow::Result<arrow::fs::FileInfo> info = fs.GetFileInfo(target);
  if (!info.ok()) return ArrowFailure(StatusCode::kInternal, what, path, info.status());
  if (info->type() == arrow::fs::FileType::Directory) {
    return Failure(StatusCode::kInvalidInput, what, path, "path names a directory");
  }
  if (arrow::Status st = fs.CreateDir(target_path.parent_path().string(), /*recursive=*/true);
      !st.ok()) {
    // A file where a parent directory should be is the caller's path, not our failure.
    const int error = arrow::internal::ErrnoFromStatus(st);
    StatusCode code = error == ENOTDIR || error == EEXIST ? StatusCode::kInvalidInput
                                                           : StatusCode::kInternal;
    return ArrowFailure(code, what, path, st);
  }

  const std::string temporary = TemporaryPathFor(target_path);
  auto write = [&]() -> arrow::Status {
    ARROW_ASSIGN_OR_RAISE(std::shared_ptr<arrow::io::OutputStream> sink,
                          fs.OpenOutputStream(temporary));
    std::shared_ptr<parquet::WriterProperties> properties =
        parquet::WriterProperties::Builder().compression(parquet::Compression::SNAPPY)->build();
    std::shared_ptr<parquet::ArrowWriterProperties> arrow_properties =
        parquet::ArrowWriterProperties::Builder().store_schema()->build();
    arrow::Status written =
        parquet::arrow::WriteTable(*table, arrow::default_memory_pool(), sink,
                                   parquet::DEFAULT_MAX_ROW_GROUP_LENGTH, properties,
                                   arrow_properties);
    // Close even after a failed write so the descriptor is released; report the first error.
    arrow::Status closed = sink->Close();
    ARROW_RETURN_NOT_OK(written);
    return closed;
  };
  arrow::Status st = write();
  if (st.ok()) st = fs.Move(temporary, target);
  if (!st.ok()) {
    // Best effort: the temporary is hidden, so one left behind by a crash does no harm.
    (void)fs.DeleteFile(temporary);
    return ArrowFailure(ClassifyEncodeFailure(st), what, path, st);
  }
  return Status::OK();
}

Result<std::shared_ptr<arrow::Table>> ReadParquetImpl(const std::string& path) {
  const std::string what = "cannot read Parquet file";
  OG_ASSIGN_OR_RETURN(std::string source, AbsolutePath(path, what));

  arrow::fs::LocalFileSystem fs;
  arrow::Result<arrow::fs::FileInfo> info = fs.GetFileInfo(source);
  if (!info.ok()) return ArrowFailure(StatusCode::kInternal, what, path, info.status());
  switch (info->type()) {
    case arrow::fs::FileType::NotFound:
      return Failure(StatusCode::kInvalidInput, what, path, "no such file");
    case arrow::fs::FileType::Directory:
      return Failure(StatusCode::kInvalidInput, what, path, "path names a directory");
    default:
      break;
  }

  arrow::Result<std::shared_ptr<arrow::io::RandomAccessFile>> file = fs.OpenInputFile(source);
  if (!file.ok()) {
    // Removed between the check above and the open: still the caller's missing file.
    StatusCode code = arrow::internal::ErrnoFromStatus(file.status()) == ENOENT
                          ? StatusCode::kInvalidInput
                          : StatusCode::kInternal;
    return ArrowFailure(code, what, path, file.status());
  }
  arrow::Result<std::unique_ptr<parquet::arrow::FileReader>> reader =
      parquet::arrow::OpenFile(*file, arrow::default_memory_pool());
  if (!reader.ok()) {
    return ArrowFailure(ClassifyDecodeFailure(reader.status()), what, path, reader.status());
  }
  arrow::Result<std::shared_ptr<arrow::Table>> table = (*reader)->ReadTable();
  if (!table.ok()) {
    return ArrowFailure(ClassifyDecodeFailure(table.status()), what, path, table.status());
  }
  return std::move(table).ValueUnsafe();
}

}  // namespace

// Parquet's internals throw (ParquetException, std::bad_alloc); the public entry points are
// the adapter boundary where anything thrown becomes a Status.
Status WriteParquet(const std::shared_ptr<arrow::Table>& table, const std::string& path) {
  try {
    return WriteParquetImpl(table, path);
  } catch (const std::exception& e) {
    return Failure(StatusCode::kInternal, "cannot write Parquet file", path, e.what());
  } catch (...) {
    return Failure(StatusCode::kInternal, "cannot write Parquet file", path, "unknown exception");
  }
}

Result<std::shared_ptr<arrow::Table>> ReadParquet(const std::string& path) {
  try {
    return ReadParquetImpl(path);
  } catch (const std::exception& e) {
    return Failure(StatusCode::kInternal, "cannot read Parquet file", path, e.what());
  } catch (...) {
    return Failure(StatusCode::kInternal, "cannot read Parquet file", path, "unknown exception");
  }
}

}  // namespace openglue::engine
