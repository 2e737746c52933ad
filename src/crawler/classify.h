// Built-in classification of one object: which format it is and its schema.
//
// Glue's order, by content rather than by name: Avro (magic Obj\x01: the schema from the
// container's header, the record count from its blocks' headers), Parquet (magic PAR1) and ORC
// (magic ORC) have their schemas read from the file's own metadata (footer only, through Arrow,
// reading ranges of the object, after the footer's declared sizes are checked); gzip and bzip2 files are decompressed on the fly and classified by what they
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
#include "common/thread_annotations.h"
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

// The footer memory one crawl's classifier threads may hold at once. Before Arrow decodes a
// Parquet or ORC footer, ClassifyObject reserves the footer's estimated cost
// (storage/columnar_footer.h) and holds it until Arrow is done; a file whose share is not free
// waits for other files to finish. A reservation over the whole budget is clamped to it (it then
// runs alone), so no file waits forever. Thread-safe.
class FooterBudget {
 public:
  explicit FooterBudget(int64_t bytes) : total_(bytes), free_(bytes) {}

  // Holds its bytes until destroyed.
  class Lease {
   public:
    Lease(Lease&& other) noexcept : budget_(other.budget_), bytes_(other.bytes_) { other.budget_ = nullptr; }
    Lease(const Lease&) = delete;
    Lease& operator=(const Lease&) = delete;
    Lease& operator=(Lease&&) = delete;
    ~Lease();

   private:
    friend class FooterBudget;
    Lease(FooterBudget* budget, int64_t bytes) : budget_(budget), bytes_(bytes) {}
    FooterBudget* budget_;
    int64_t bytes_;
  };

  // Blocks until min(bytes, total) are free, then takes them.
  Lease Reserve(int64_t bytes);
  int64_t free_bytes();

 private:
  const int64_t total_;
  Mutex mu_;
  CondVar freed_;
  int64_t free_ GUARDED_BY(mu_);
};

// A crawl's footer budget: two footers at the per-file limit (storage::FooterLimits, 256 MiB of
// estimated decoding each) at a time; typical footers (kilobytes) never wait.
inline constexpr int64_t kCrawlFooterBudget = int64_t{512} << 20;

// Custom classifiers are tried in order on text files (after decompression) before the
// built-in ones; the first that recognises the file wins. Parquet and ORC footers are checked
// (storage/columnar_footer.h) before Arrow reads them: a footer that declares more than the file
// holds or more than the limits allow is InvalidInput for that file; with a `budget`, the
// footer's cost is reserved from it while Arrow decodes the footer.
Result<FileClass> ClassifyObject(storage::ObjectStore* store, const std::string& bucket,
                                 const storage::ObjectInfo& object,
                                 const std::vector<CustomClassifier>& custom = {},
                                 FooterBudget* budget = nullptr);

}  // namespace openglue::crawler
