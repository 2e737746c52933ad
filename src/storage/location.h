// Location: what a path a user gives (a ScriptLocation, an --extra-py-files entry, a table's
// Location) refers to.
//
//   s3://bucket/key, s3a://bucket/key, s3n://bucket/key  -> an object (or a prefix) in a bucket
//   file:///abs/path, file://localhost/abs/path          -> a local file
//   anything without "://"                               -> a local file, the path as given
//
// Parsing is purely lexical and never touches the disk. The key is kept exactly as written:
// no percent-decoding, no collapsing of `//`, `.` or `..` (those are characters of an S3 key).
// Whether a key can be held confined is the ObjectStore's decision (LocalObjectStore refuses
// `..`, `.` and empty segments).
#pragma once

#include <string>
#include <string_view>

#include "common/status.h"

namespace openglue::storage {

enum class LocationScheme { kObject, kLocalFile };

struct Location {
  LocationScheme scheme = LocationScheme::kLocalFile;
  std::string bucket;  // kObject: a valid S3 bucket name
  std::string key;     // kObject: the key or prefix after "bucket/" ("" for the bucket itself)
  std::string path;    // kLocalFile: the local path
  std::string uri;     // the text as given (for messages)
};

// InvalidInput naming `uri` when it is empty, holds NUL or invalid UTF-8, has a scheme other
// than s3/s3a/s3n/file, a file:// URI with a remote host, an s3 URI whose bucket name S3 would
// refuse (e.g. "..", "", "a_b"), or a key longer than 1,024 bytes.
Result<Location> ParseLocation(std::string_view uri);

}  // namespace openglue::storage
