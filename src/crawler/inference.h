// Schema inference for the crawler's built-in classifiers on text data: CSV (delimiter and header
// detection, column types) and JSON (nested objects become structs, arrays arrays), plus the type
// algebra every classifier shares (Hive type names, widening, schema merge).
//
// Everything here works on a sample that is already in memory (the crawler reads at most
// kSampleBytes of a file, decompressed): no I/O, no Arrow. Nothing throws; text that is not
// what a classifier expects gives a Status (InvalidInput with a message saying why), which the
// crawler reports as a skipped file.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "common/status.h"

namespace openglue::crawler {

// How much of a file a text classifier reads: about 1,000 records or 1 MB, as Glue does.
inline constexpr int64_t kSampleBytes = 1 << 20;
inline constexpr int64_t kSampleRecords = 1000;

struct Field;

// A column type as the crawler infers it, printed as Hive/Glue type text.
struct DataType {
  enum class Kind { kNull, kBoolean, kInt, kBigint, kDouble, kString, kArray, kStruct, kOther };
  Kind kind = Kind::kNull;
  std::string other;              // kOther: Hive text ("date", "decimal(10,2)")
  std::vector<Field> fields;      // kStruct, in first-seen order
  std::vector<DataType> element;  // kArray: exactly one

  // Out of line: Field is complete only after this class.
  DataType();
  ~DataType();
  DataType(const DataType&);
  DataType(DataType&&) noexcept;
  DataType& operator=(const DataType&);
  DataType& operator=(DataType&&) noexcept;

  static DataType Of(Kind kind) { DataType t; t.kind = kind; return t; }
  static DataType Other(std::string hive) { DataType t; t.kind = Kind::kOther; t.other = std::move(hive); return t; }
  // Hive type text: "bigint", "array<string>", "struct<a:int,b:string>". kNull prints "string".
  std::string ToHive() const;
  bool operator==(const DataType& o) const;
};

struct Field {
  std::string name;
  DataType type;
};

// The narrowest type that holds values of both: null gives way to anything, int < bigint <
// double, structs merge field by field (new fields appended), arrays merge their elements; any
// other disagreement is string. `*conflict` (optional) is set when a type had to fall back to
// string or a struct/array met a scalar.
DataType Widen(const DataType& a, const DataType& b, bool* conflict = nullptr);

struct Column {
  std::string name;
  DataType type;
};
using Schema = std::vector<Column>;

// `into` with the columns of `from` merged in: a column of both gets the widened type, a new one
// is appended (Glue's MergeNewColumns order). Names compare case-insensitively. Returns the names
// of the columns whose types conflicted.
std::vector<std::string> MergeSchema(Schema* into, const Schema& from);
// How alike two schemas are: the column names they share over the columns of the smaller one
// (|A∩B| / min(|A|,|B|), case-insensitive), so a schema that only gained columns is 1; 1 for two
// empty schemas.
double Similarity(const Schema& a, const Schema& b);

// What a text classifier found in a sample.
struct TextSample {
  std::string classification;   // "csv" or "json"
  Schema schema;
  char delimiter = 0;           // csv
  bool header = false;          // csv: the first record is a header (skip.header.line.count 1)
  bool quoted = false;          // csv: a quote character appeared
  int64_t records = 0;          // records in the sample
  int64_t sample_bytes = 0;     // bytes of the sample those records span
};

// Options a custom CSV classifier gives (empty: detect).
struct CsvHints {
  char delimiter = 0;           // 0: detect among , | \t ; \x01
  char quote = '"';
  enum class Header { kDetect, kPresent, kAbsent } header = Header::kDetect;
  std::vector<std::string> names;  // a custom classifier's Header
  bool allow_single_column = false;
};

// `text` is a prefix of a file (or all of it when `complete`); a record cut by the end of an
// incomplete sample is dropped. InvalidInput when the text is binary (NUL bytes, invalid UTF-8),
// has no consistent delimiter, or holds no record.
Result<TextSample> InferCsv(std::string_view text, bool complete, const CsvHints& hints = {});
// JSON lines, one JSON array of objects, or a single object. InvalidInput when no record parses
// as an object (or the text is binary).
Result<TextSample> InferJson(std::string_view text, bool complete);
// A custom JSON classifier: the records are what `json_path` selects in each JSON document of the
// text (one document, or JSON lines): `$`, `.name`, `['name']`, `[n]` and `[*]` steps, e.g.
// `$[*]`, `$.records[*]`, `$.data`. InvalidInput for a path outside that syntax or when it
// selects no object.
Result<TextSample> InferJsonPath(std::string_view text, bool complete, const std::string& json_path);

// A custom XML classifier: each `<row_tag ...>...</row_tag>` element of the sample is a record;
// its attributes and child elements are the columns (a child with children is a struct, a
// repeated child an array, text typed as CSV values are). A self-closing row element is no
// record (as Glue). InvalidInput when the sample holds no such element.
Result<TextSample> InferXml(std::string_view text, bool complete, const std::string& row_tag,
                            const std::string& classification);

// A folder or table name made safe the way Glue writes names: lowercase, every character other
// than a-z, 0-9 and '_' replaced by '_'.
std::string CatalogName(std::string_view name);

}  // namespace openglue::crawler
