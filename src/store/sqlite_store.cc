#include "store/sqlite_store.h"

#include <sqlite3.h>

#include <algorithm>
#include <thread>
#include <unordered_map>

namespace openglue::store {

std::string MakeKey(const std::vector<std::string_view>& parts) {
  std::string key;
  for (size_t i = 0; i < parts.size(); ++i) {
    if (i) key.push_back(kKeySep);
    key.append(parts[i]);
  }
  return key;
}

std::string PrefixOf(const std::vector<std::string_view>& parts) {
  std::string key = MakeKey(parts);
  key.push_back(kKeySep);
  return key;
}

namespace {

const char* kSchema =
    "CREATE TABLE IF NOT EXISTS objects ("
    "  kind TEXT NOT NULL, key BLOB NOT NULL, doc BLOB NOT NULL,"
    "  PRIMARY KEY (kind, key)) WITHOUT ROWID;";

// Per-connection cache of prepared statements. Owned by the connection's user.
struct StatementCache {
  std::unordered_map<std::string, sqlite3_stmt*> statements;
  ~StatementCache() {
    for (auto& [sql, stmt] : statements) sqlite3_finalize(stmt);
  }
};

std::mutex g_cache_mutex;
std::unordered_map<sqlite3*, std::unique_ptr<StatementCache>> g_caches;  // GUARDED_BY(g_cache_mutex)

Status SqlError(sqlite3* db, const std::string& what) {
  return Status::Internal(what + ": " + sqlite3_errmsg(db));
}

Status Exec(sqlite3* db, const char* sql) {
  char* err = nullptr;
  if (sqlite3_exec(db, sql, nullptr, nullptr, &err) != SQLITE_OK) {
    std::string message = err ? err : "unknown error";
    sqlite3_free(err);
    return Status::Internal(std::string("sqlite: ") + sql + ": " + message);
  }
  return Status::OK();
}

Result<sqlite3*> Open(const std::string& path, bool writer) {
  sqlite3* db = nullptr;
  int flags = SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX;
  if (sqlite3_open_v2(path.c_str(), &db, flags, nullptr) != SQLITE_OK) {
    std::string message = db ? sqlite3_errmsg(db) : "out of memory";
    sqlite3_close(db);
    return Status::InvalidInput("cannot open metadata store '" + path + "': " + message);
  }
  sqlite3_busy_timeout(db, 30000);
  Status st = Exec(db, "PRAGMA journal_mode=WAL; PRAGMA synchronous=FULL; PRAGMA cache_size=-65536;"
                       "PRAGMA temp_store=MEMORY; PRAGMA mmap_size=1073741824;");
  if (st.ok() && writer) st = Exec(db, kSchema);
  if (!st.ok()) {
    sqlite3_close(db);
    return st;
  }
  std::lock_guard<std::mutex> lock(g_cache_mutex);
  g_caches[db] = std::make_unique<StatementCache>();
  return db;
}

void Close(sqlite3* db) {
  {
    std::lock_guard<std::mutex> lock(g_cache_mutex);
    g_caches.erase(db);
  }
  sqlite3_close(db);
}

StatementCache* CacheOf(sqlite3* db) {
  std::lock_guard<std::mutex> lock(g_cache_mutex);
  return g_caches[db].get();
}

// A prepared statement from the connection's cache, reset and unbound on scope exit.
class Stmt {
 public:
  static Result<Stmt> Prepare(sqlite3* db, StatementCache* cache, const std::string& sql) {
    auto it = cache->statements.find(sql);
    if (it == cache->statements.end()) {
      sqlite3_stmt* stmt = nullptr;
      if (sqlite3_prepare_v2(db, sql.c_str(), -1, &stmt, nullptr) != SQLITE_OK)
        return SqlError(db, "prepare");
      it = cache->statements.emplace(sql, stmt).first;
    }
    return Stmt(db, it->second);
  }
  Stmt(Stmt&& other) noexcept : db_(other.db_), stmt_(other.stmt_) { other.stmt_ = nullptr; }
  ~Stmt() {
    if (stmt_) {
      sqlite3_reset(stmt_);
      sqlite3_clear_bindings(stmt_);
    }
  }
  void Bind(int i, std::string_view text) {
    sqlite3_bind_blob(stmt_, i, text.data(), static_cast<int>(text.size()), SQLITE_STATIC);
  }
  void BindText(int i, std::string_view text) {
    sqlite3_bind_text(stmt_, i, text.data(), static_cast<int>(text.size()), SQLITE_STATIC);
  }
  void BindInt(int i, int64_t v) { sqlite3_bind_int64(stmt_, i, v); }
  // SQLITE_ROW, SQLITE_DONE, or an error code.
  int Step() { return sqlite3_step(stmt_); }
  std::string Column(int i) {
    const void* data = sqlite3_column_blob(stmt_, i);
    int size = sqlite3_column_bytes(stmt_, i);
    return data ? std::string(static_cast<const char*>(data), size) : std::string();
  }
  int64_t ColumnInt(int i) { return sqlite3_column_int64(stmt_, i); }
  sqlite3* db() const { return db_; }

 private:
  Stmt(sqlite3* db, sqlite3_stmt* stmt) : db_(db), stmt_(stmt) {}
  sqlite3* db_;
  sqlite3_stmt* stmt_;
};

// Runs one statement without results (BEGIN, COMMIT, ROLLBACK) as a prepared statement from
// the connection's cache: what sqlite3_exec does, without parsing the SQL on every call.
Status ExecCached(sqlite3* db, StatementCache* cache, const std::string& sql) {
  Result<Stmt> stmt = Stmt::Prepare(db, cache, sql);
  if (!stmt.ok()) return Status::Internal("sqlite: " + sql + ": " + sqlite3_errmsg(db));
  int rc = stmt->Step();
  if (rc != SQLITE_DONE && rc != SQLITE_ROW)
    return Status::Internal("sqlite: " + sql + ": " + sqlite3_errmsg(db));
  return Status::OK();
}

// The smallest string greater than every string starting with `prefix`, or "" if none.
std::string PrefixEnd(std::string prefix) {
  while (!prefix.empty()) {
    unsigned char last = static_cast<unsigned char>(prefix.back());
    if (last < 0xFF) {
      prefix.back() = static_cast<char>(last + 1);
      return prefix;
    }
    prefix.pop_back();
  }
  return prefix;
}

}  // namespace

class SqliteTransaction : public Transaction {
 public:
  SqliteTransaction(SqliteStore* store, sqlite3* db, bool writer)
      : store_(store), db_(db), cache_(CacheOf(db)), writer_(writer) {}

  ~SqliteTransaction() override {
    if (!finished_) (void)ExecCached(db_, cache_, kRollback);
    Release();
  }

  Status Begin() { return ExecCached(db_, cache_, writer_ ? kBeginImmediate : kBegin); }

  Result<std::optional<std::string>> Get(std::string_view kind, std::string_view key) override {
    if (finished_) return Status::Internal("read after the transaction finished");
    static const std::string kGet = "SELECT doc FROM objects WHERE kind=? AND key=?";
    OG_ASSIGN_OR_RETURN(Stmt stmt, Stmt::Prepare(db_, cache_, kGet));
    stmt.BindText(1, kind);
    stmt.Bind(2, key);
    int rc = stmt.Step();
    if (rc == SQLITE_ROW) return std::optional<std::string>(stmt.Column(0));
    if (rc == SQLITE_DONE) return std::optional<std::string>();
    return SqlError(db_, "get");
  }

  Status Put(std::string_view kind, std::string_view key, std::string_view doc) override {
    OG_RETURN_NOT_OK(CheckWriter());
    OG_ASSIGN_OR_RETURN(Stmt stmt,
                     Stmt::Prepare(db_, cache_, "INSERT OR REPLACE INTO objects(kind,key,doc) VALUES(?,?,?)"));
    stmt.BindText(1, kind);
    stmt.Bind(2, key);
    stmt.Bind(3, doc);
    if (stmt.Step() != SQLITE_DONE) return SqlError(db_, "put");
    return Status::OK();
  }

  Status Insert(std::string_view kind, std::string_view key, std::string_view doc) override {
    OG_RETURN_NOT_OK(CheckWriter());
    OG_ASSIGN_OR_RETURN(Stmt stmt,
                     Stmt::Prepare(db_, cache_, "INSERT OR IGNORE INTO objects(kind,key,doc) VALUES(?,?,?)"));
    stmt.BindText(1, kind);
    stmt.Bind(2, key);
    stmt.Bind(3, doc);
    if (stmt.Step() != SQLITE_DONE) return SqlError(db_, "insert");
    if (sqlite3_changes(db_) == 0) return Status::AlreadyExists("key exists");
    return Status::OK();
  }

  Result<bool> Delete(std::string_view kind, std::string_view key) override {
    OG_RETURN_NOT_OK(CheckWriter());
    OG_ASSIGN_OR_RETURN(Stmt stmt, Stmt::Prepare(db_, cache_, "DELETE FROM objects WHERE kind=? AND key=?"));
    stmt.BindText(1, kind);
    stmt.Bind(2, key);
    if (stmt.Step() != SQLITE_DONE) return SqlError(db_, "delete");
    return sqlite3_changes(db_) > 0;
  }

  Result<int64_t> DeletePrefix(std::string_view kind, std::string_view prefix) override {
    OG_RETURN_NOT_OK(CheckWriter());
    std::string end = PrefixEnd(std::string(prefix));
    std::string sql = "DELETE FROM objects WHERE kind=? AND key>=?";
    if (!end.empty()) sql += " AND key<?";
    OG_ASSIGN_OR_RETURN(Stmt stmt, Stmt::Prepare(db_, cache_, sql));
    stmt.BindText(1, kind);
    stmt.Bind(2, prefix);
    if (!end.empty()) stmt.Bind(3, end);
    if (stmt.Step() != SQLITE_DONE) return SqlError(db_, "delete prefix");
    return static_cast<int64_t>(sqlite3_changes(db_));
  }

  Result<std::vector<Row>> Scan(std::string_view kind, const ScanOptions& options) override {
    if (finished_) return Status::Internal("read after the transaction finished");
    std::string end = PrefixEnd(options.prefix);
    std::string sql = options.keys_only ? "SELECT key FROM objects WHERE kind=?1"
                                        : "SELECT key, doc FROM objects WHERE kind=?1";
    std::string lower = options.prefix;
    bool strict = false;
    if (!options.start_after.empty() && options.start_after >= lower) {
      lower = options.start_after;
      strict = true;
    }
    sql += strict ? " AND key>?2" : " AND key>=?2";
    if (!end.empty()) sql += " AND key<?3";
    sql += " ORDER BY key LIMIT ?4";
    OG_ASSIGN_OR_RETURN(Stmt stmt, Stmt::Prepare(db_, cache_, sql));
    stmt.BindText(1, kind);
    stmt.Bind(2, lower);
    if (!end.empty()) stmt.Bind(3, end);
    stmt.BindInt(4, options.limit);
    std::vector<Row> rows;
    while (true) {
      int rc = stmt.Step();
      if (rc == SQLITE_DONE) break;
      if (rc != SQLITE_ROW) return SqlError(db_, "scan");
      Row row;
      row.key = stmt.Column(0);
      if (!options.keys_only) row.doc = stmt.Column(1);
      rows.push_back(std::move(row));
    }
    return rows;
  }

  Result<int64_t> Count(std::string_view kind, std::string_view prefix) override {
    if (finished_) return Status::Internal("read after the transaction finished");
    std::string end = PrefixEnd(std::string(prefix));
    std::string sql = "SELECT count(*) FROM objects WHERE kind=? AND key>=?";
    if (!end.empty()) sql += " AND key<?";
    OG_ASSIGN_OR_RETURN(Stmt stmt, Stmt::Prepare(db_, cache_, sql));
    stmt.BindText(1, kind);
    stmt.Bind(2, prefix);
    if (!end.empty()) stmt.Bind(3, end);
    if (stmt.Step() != SQLITE_ROW) return SqlError(db_, "count");
    return stmt.ColumnInt(0);
  }

  Status Commit() override {
    if (finished_) return Status::Internal("transaction already finished");
    finished_ = true;
    Status st = ExecCached(db_, cache_, kCommit);
    if (!st.ok()) (void)ExecCached(db_, cache_, kRollback);
    // The next writer may start as soon as this one is durable, even while this object lives.
    Release();
    return st;
  }

 private:
  Status CheckWriter() const {
    if (!writer_) return Status::Internal("write in a read-only transaction");
    if (finished_) return Status::Internal("write after commit");
    return Status::OK();
  }

  // Gives the connection back: unlocks the writer or returns the reader to the pool. Once.
  void Release() {
    if (released_) return;
    released_ = true;
    if (writer_) store_->write_mutex_.unlock();
    else store_->ReleaseReader(db_);
  }

  static inline const std::string kBegin = "BEGIN";
  static inline const std::string kBeginImmediate = "BEGIN IMMEDIATE";
  static inline const std::string kCommit = "COMMIT";
  static inline const std::string kRollback = "ROLLBACK";

  SqliteStore* store_;
  sqlite3* db_;
  StatementCache* cache_;  // db_'s prepared statements; db_ is this transaction's alone
  bool writer_;
  bool finished_ = false;
  bool released_ = false;
};

SqliteStore::SqliteStore(std::string path, SqliteStoreOptions options)
    : path_(std::move(path)), options_(options) {
  int cores = static_cast<int>(std::thread::hardware_concurrency());
  max_readers_ = options_.max_readers > 0 ? options_.max_readers : std::max(4, 2 * cores);
}

Result<std::unique_ptr<SqliteStore>> SqliteStore::Make(const std::string& path,
                                                       SqliteStoreOptions options) {
  std::unique_ptr<SqliteStore> store(new SqliteStore(path, options));
  OG_ASSIGN_OR_RETURN(store->writer_, Open(path, /*writer=*/true));
  return store;
}

SqliteStore::~SqliteStore() {
  // Every transaction has ended (they borrow the store), so every reader is idle.
  std::vector<IdleReader> idle;
  {
    MutexLock lock(&pool_mutex_);
    idle.swap(idle_readers_);
  }
  for (const IdleReader& reader : idle) Close(reader.db);
  if (writer_) Close(writer_);
}

std::vector<sqlite3*> SqliteStore::TakeExpiredReaders() {
  std::vector<sqlite3*> expired;
  auto now = std::chrono::steady_clock::now();
  // Oldest first: the front of the vector has been idle longest.
  size_t n = 0;
  while (n < idle_readers_.size() && now - idle_readers_[n].since >= options_.reader_idle) {
    expired.push_back(idle_readers_[n].db);
    ++n;
  }
  idle_readers_.erase(idle_readers_.begin(), idle_readers_.begin() + static_cast<long>(n));
  open_readers_ -= static_cast<int>(n);
  return expired;
}

Result<sqlite3*> SqliteStore::AcquireReader() {
  std::vector<sqlite3*> expired;
  sqlite3* reused = nullptr;
  bool open_new = false;
  {
    MutexLock lock(&pool_mutex_);
    expired = TakeExpiredReaders();
    auto deadline = std::chrono::steady_clock::now() + options_.reader_wait;
    while (true) {
      if (!idle_readers_.empty()) {
        reused = idle_readers_.back().db;  // the warmest cache
        idle_readers_.pop_back();
        break;
      }
      if (open_readers_ < max_readers_) {
        ++open_readers_;  // reserved; opened outside the lock
        open_new = true;
        break;
      }
      auto now = std::chrono::steady_clock::now();
      if (now >= deadline) break;
      reader_released_.WaitFor(&pool_mutex_, deadline - now);
    }
  }
  for (sqlite3* db : expired) Close(db);
  if (reused) return reused;
  if (!open_new)
    return Status(StatusCode::kOperationTimeout,
                  "all " + std::to_string(max_readers_) + " metadata store readers are busy");
  auto opened = Open(path_, /*writer=*/false);
  if (!opened.ok()) {
    MutexLock lock(&pool_mutex_);
    --open_readers_;
    reader_released_.Signal();
    return opened.status();
  }
  return *opened;
}

void SqliteStore::ReleaseReader(sqlite3* db) {
  std::vector<sqlite3*> expired;
  {
    MutexLock lock(&pool_mutex_);
    idle_readers_.push_back({db, std::chrono::steady_clock::now()});
    expired = TakeExpiredReaders();
    reader_released_.Signal();
  }
  for (sqlite3* reader : expired) Close(reader);
}

int SqliteStore::open_readers() {
  std::vector<sqlite3*> expired;
  int open;
  {
    MutexLock lock(&pool_mutex_);
    expired = TakeExpiredReaders();
    open = open_readers_;
  }
  for (sqlite3* db : expired) Close(db);
  return open;
}

Result<std::unique_ptr<Transaction>> SqliteStore::BeginWrite() {
  write_mutex_.lock();
  auto txn = std::make_unique<SqliteTransaction>(this, writer_, /*writer=*/true);
  OG_RETURN_NOT_OK(txn->Begin());  // on failure the destructor unlocks
  return std::unique_ptr<Transaction>(std::move(txn));
}

Result<std::unique_ptr<Transaction>> SqliteStore::BeginRead() {
  OG_ASSIGN_OR_RETURN(sqlite3* db, AcquireReader());
  auto txn = std::make_unique<SqliteTransaction>(this, db, /*writer=*/false);
  OG_RETURN_NOT_OK(txn->Begin());
  return std::unique_ptr<Transaction>(std::move(txn));
}

}  // namespace openglue::store
