// Built-in classification of one object: which format it is and its schema.
//
// Glue's order, by content rather than by name: Avro (magic Obj\x01: the schema from the
// container's header, the record count from its blocks' headers), Parquet (magic PAR1) and ORC
// (magic ORC) have their schemas read from the file's own metadata (footer only, through Arrow,
// reading ranges of the object); gzip and bzip2 files are decompressed on the fly and classified by what they
// hold; then JSON (the text starts with `{` or `[`) and CSV (inference.h). A text classifier
// reads at most kSampleBytes of (decompressed) data.
//
// The crawler module is the only one besides the engine and storage that links Arrow, and only
// this file's .cc includes it (the crawler cannot depend on the engine: the layering keeps
// the engine beside the chain, and the TSan build leaves it out).
//
// Errors: InvalidInput with a message saying why the object could not be classified (binary,
// truncated Parquet footer, no consistent delimiter, ...); EntityNotFound when it vanished;
// Internal for a storage failure. Never throws. Thread-safe (the store must be).
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "common/status.h"
#include "crawler/inference.h"
#include "storage/object_store.h"

namespace openglue::crawler {

struct FileClass {
  std::string classification;  // avro, parquet, orc, json, csv
  std::string compression;     // "" or gzip, bzip2 (the text formats)
  Schema schema;
  char delimiter = 0;          // csv
  bool header = false;         // csv
  bool quoted = false;         // csv
  int64_t records = -1;        // exact (parquet, orc) or estimated from the sample (text)
  int64_t records_sample_bytes = 0;  // text: the bytes of the sample `records` come from
  std::string classifier;      // the custom classifier that recognised the file ("": built-in)
  std::string serde;           // a custom classifier's SerDe ("": the classification's)
  std::map<std::string, std::string> serde_parameters;  // with `serde`
  std::map<std::string, std::string> parameters;        // extra table parameters (jsonPath, ...)
  // Files of one table must agree on this: classification, the custom classifier, and for CSV
  // delimiter and header.
  std::string FormatKey() const;
};

class GrokPattern;

// A custom classifier of the crawler (GetClassifier's document), ready to apply.
struct CustomClassifier {
  enum class Kind { kCsv, kJson, kGrok, kXml };
  Kind kind = Kind::kCsv;
  std::string name;
  CsvHints csv;
  std::string json_path;
  std::string classification;  // grok, xml
  std::string row_tag;         // xml
  std::string grok_pattern, custom_patterns;
  std::shared_ptr<const GrokPattern> grok;
  // From a stored classifier document ({"CsvClassifier": {...}} etc.). InvalidInput for a
  // grok pattern that does not compile.
  static Result<CustomClassifier> FromDocument(const std::string& name, const std::string& doc_text);
};

// Custom classifiers are tried in order on text files (after decompression) before the
// built-in ones; the first that recognises the file wins.
Result<FileClass> ClassifyObject(storage::ObjectStore* store, const std::string& bucket,
                                 const storage::ObjectInfo& object,
                                 const std::vector<CustomClassifier>& custom = {});

}  // namespace openglue::crawler
