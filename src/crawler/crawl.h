// One crawl of one crawler: list the S3 targets, classify, plan the tables, write the catalog.
//
// RunCrawlBody is what the service runs on a crawl's thread. It reads the crawler's recrawl
// state (folders already crawled, tables already drawn) and returns the new one in the
// outcome; the service stores it only when the crawl SUCCEEDED.
//
// Rules (docs/crawlers.md has them with examples):
//  - Listing: every object under each S3 target's path, except hidden ones (a path segment
//    starting with `_` or `.`) and those matching an Exclusions glob (common/glob.h), matched
//    against the key relative to the include path and against the full s3:// uri.
//  - SampleSize N: only the first N files (key order) of each folder are read.
//  - RecrawlPolicy CRAWL_NEW_FOLDERS_ONLY: folders crawled by an earlier successful crawl are not
//    read again; a new folder under a known table becomes a new partition of that table.
//  - A file that cannot be classified is skipped and reported (log and LastCrawl message).
//  - SchemaChangePolicy, Configuration (Grouping, CrawlerOutput, TableThreshold), TablePrefix.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "catalog/catalog.h"
#include "common/clock.h"
#include "common/json.h"
#include "common/status.h"
#include "crawler/crawler_service.h"
#include "store/metadata_store.h"
#include "storage/object_store.h"

namespace openglue::crawler {

// The store kind of a crawler's recrawl state (key: crawler name).
inline constexpr const char* kCrawlerState = "crawler_state";

// The crawler's Configuration JSON, checked: {"Version": 1.0, "Grouping": {...},
// "CrawlerOutput": {...}}. InvalidInput naming what is wrong.
struct CrawlerConfiguration {
  bool combine_compatible = false;
  int table_level = 0;               // absolute S3 level (bucket = 1); 0 = unset
  bool merge_new_columns = false;    // CrawlerOutput.Tables.AddOrUpdateBehavior
  bool inherit_from_table = false;   // CrawlerOutput.Partitions.AddOrUpdateBehavior
  int table_threshold = 0;           // 0 = none
};
Result<CrawlerConfiguration> ParseCrawlerConfiguration(const std::string& text);

// A crawl's log: lines buffered and written to the crawler's stream, each "[<crawl id>] LEVEL : ..."
// with the message's control characters escaped (EscapeControlCharacters), so that one message is
// one line whatever names it holds.
class CrawlLog {
 public:
  CrawlLog(std::string stream, std::string crawl_id, CrawlLogWriter writer)
      : stream_(std::move(stream)), crawl_id_(std::move(crawl_id)), writer_(std::move(writer)) {}
  void Benchmark(const std::string& m) { Add("BENCHMARK", m); }
  void Info(const std::string& m) { Add("INFO", m); }
  void Warn(const std::string& m) { Add("WARN", m); }
  void Error(const std::string& m) { Add("ERROR", m); }
  void Flush();

 private:
  void Add(const char* level, const std::string& message);
  std::string stream_, crawl_id_;
  CrawlLogWriter writer_;
  std::vector<std::string> pending_;
};

struct CrawlContext {
  store::MetadataStore* store;
  catalog::Catalog* catalog;
  storage::ObjectStore* objects;
  const Clock* clock;
  const std::atomic<bool>* cancel;
  CrawlLog* log;
  int classify_threads = 4;
  JdbcSchemas jdbc;
};

struct CrawlOutcome {
  std::string state = "SUCCEEDED";  // SUCCEEDED, FAILED, CANCELLED
  std::string error;
  std::vector<std::string> skipped;  // files and folders left out, with the reason
  int64_t tables_created = 0, tables_updated = 0, tables_deleted = 0;
  int64_t partitions_created = 0, partitions_updated = 0, partitions_deleted = 0;
  Json new_state;                    // the recrawl state to store when SUCCEEDED
  // A SUCCEEDED crawl's catalog changes, not yet committed: the service stores the crawl's end in
  // this transaction and commits both at once. Null when the crawl wrote nothing (it failed, was
  // cancelled, or ended before writing); a failed crawl's changes are rolled back.
  std::unique_ptr<store::Transaction> writes;
  // Glue's crawl summary: {"TABLE":{"ADD":{"Count":n}},"PARTITION":{...}} for what changed.
  std::string Summary() const;
};

// Never throws (the service catches anyway). `crawler` is the stored crawler document. While
// the returned outcome holds `writes`, the calling thread holds the store's write transaction:
// it commits or drops it before it begins another.
CrawlOutcome RunCrawlBody(const Json& crawler, const CrawlContext& context);

}  // namespace openglue::crawler
