// SqliteStore: the default MetadataStore, one SQLite database file in WAL mode with
// synchronous=FULL, so an acknowledged Commit() survives kill -9 and power loss.
//
// Writers are serialized by a mutex around one dedicated write connection; readers each take a
// connection from a pool, so reads run concurrently with each other and with the writer.
#pragma once

#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "store/metadata_store.h"

struct sqlite3;

namespace openglue::store {

class SqliteStore : public MetadataStore {
 public:
  // Opens (creating if needed) the database at `path`. InvalidInput if it cannot be opened.
  static Result<std::unique_ptr<SqliteStore>> Make(const std::string& path);
  ~SqliteStore() override;

  Result<std::unique_ptr<Transaction>> BeginWrite() override;
  Result<std::unique_ptr<Transaction>> BeginRead() override;

  // Connection pool internals, used by the transactions.
  sqlite3* AcquireReader();
  void ReleaseReader(sqlite3* db);

 private:
  explicit SqliteStore(std::string path) : path_(std::move(path)) {}

  std::string path_;
  sqlite3* writer_ = nullptr;
  std::mutex write_mutex_;                // held for the life of a write transaction
  std::mutex pool_mutex_;
  std::vector<sqlite3*> idle_readers_;    // GUARDED_BY(pool_mutex_)
  std::vector<sqlite3*> all_readers_;     // GUARDED_BY(pool_mutex_)
  friend class SqliteTransaction;
};

}  // namespace openglue::store
