// SqliteStore: the default MetadataStore, one SQLite database file in WAL mode with
// synchronous=FULL, so an acknowledged Commit() survives kill -9 and power loss.
//
// Writers are serialized by a mutex around one dedicated write connection; readers each take a
// connection from a pool, so reads run concurrently with each other and with the writer.
//
// The pool is bounded: at most `max_readers` reader connections exist (each may hold a page
// cache of up to 64 MiB); a read that finds them all busy waits for one, up to
// `reader_wait`, then fails with OperationTimeout. A reader idle for longer than `reader_idle`
// is closed at the next pool activity, so the pool shrinks back after a burst.
#pragma once

#include <chrono>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "common/thread_annotations.h"
#include "store/metadata_store.h"

struct sqlite3;

namespace openglue::store {

struct SqliteStoreOptions {
  // Most reader connections open at once; 0 = twice the number of cores, at least 4.
  int max_readers = 0;
  // An idle reader older than this is closed.
  std::chrono::milliseconds reader_idle{std::chrono::seconds(60)};
  // How long BeginRead waits for a reader when all are busy.
  std::chrono::milliseconds reader_wait{std::chrono::seconds(30)};
};

class SqliteStore : public MetadataStore {
 public:
  // Opens (creating if needed) the database at `path`. InvalidInput if it cannot be opened.
  static Result<std::unique_ptr<SqliteStore>> Make(const std::string& path,
                                                   SqliteStoreOptions options = {});
  ~SqliteStore() override;

  Result<std::unique_ptr<Transaction>> BeginWrite() override;
  Result<std::unique_ptr<Transaction>> BeginRead() override;

  // Connection pool internals, used by the transactions.
  Result<sqlite3*> AcquireReader() EXCLUDES(pool_mutex_);
  void ReleaseReader(sqlite3* db) EXCLUDES(pool_mutex_);

  // Reader connections open now (idle or in use), and the cap. For tests and metrics.
  int open_readers() EXCLUDES(pool_mutex_);
  int max_readers() const { return max_readers_; }

 private:
  SqliteStore(std::string path, SqliteStoreOptions options);
  // Removes idle readers past their idle time from the pool; the caller closes them outside
  // the lock.
  std::vector<sqlite3*> TakeExpiredReaders() REQUIRES(pool_mutex_);

  struct IdleReader {
    sqlite3* db;
    std::chrono::steady_clock::time_point since;
  };

  std::string path_;
  SqliteStoreOptions options_;
  int max_readers_;
  sqlite3* writer_ = nullptr;
  std::mutex write_mutex_;  // held for the life of a write transaction
  Mutex pool_mutex_;
  CondVar reader_released_;
  std::vector<IdleReader> idle_readers_ GUARDED_BY(pool_mutex_);  // most recently used last
  int open_readers_ GUARDED_BY(pool_mutex_) = 0;  // idle + in use + being opened
  friend class SqliteTransaction;
};

}  // namespace openglue::store
