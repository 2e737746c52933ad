// MetadataStore: durable, transactional storage of catalog documents.
//
// The store knows nothing of Glue: it keeps (kind, key) -> document rows. A `kind` names a
// collection ("database", "table", "partition", ...); a key is a composite of parts joined by
// kKeySep so that every prefix of parts is a contiguous range. Callers compose keys with
// MakeKey and scan prefixes with PrefixOf.
//
// Thread-safety: a MetadataStore may be shared by threads. A Transaction belongs to one thread.
// Writes become visible and durable together at Commit(); a Transaction destroyed without
// Commit() is rolled back, so a failed request never leaves a half-applied write.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/status.h"

namespace openglue::store {

inline constexpr char kKeySep = '\x1f';

// Joins key parts with kKeySep. Parts must not contain kKeySep (catalog names cannot).
std::string MakeKey(const std::vector<std::string_view>& parts);
// The key prefix that selects every key whose leading parts equal `parts`.
std::string PrefixOf(const std::vector<std::string_view>& parts);

struct Row {
  std::string key;
  std::string doc;
};

struct ScanOptions {
  std::string prefix;       // only keys starting with this
  std::string start_after;  // only keys strictly greater than this ("" = from the start)
  int64_t limit = -1;       // at most this many rows (-1 = all)
  bool keys_only = false;   // leave Row::doc empty (cheaper for large documents)
};

class Transaction {
 public:
  virtual ~Transaction() = default;
  // The document at (kind, key), or nullopt when there is none.
  virtual Result<std::optional<std::string>> Get(std::string_view kind, std::string_view key) = 0;
  // Inserts or replaces.
  virtual Status Put(std::string_view kind, std::string_view key, std::string_view doc) = 0;
  // Inserts; AlreadyExists if the key is present.
  virtual Status Insert(std::string_view kind, std::string_view key, std::string_view doc) = 0;
  // Removes the row; returns whether it existed.
  virtual Result<bool> Delete(std::string_view kind, std::string_view key) = 0;
  // Removes every row of `kind` whose key starts with `prefix`; returns how many.
  virtual Result<int64_t> DeletePrefix(std::string_view kind, std::string_view prefix) = 0;
  // Rows in key order.
  virtual Result<std::vector<Row>> Scan(std::string_view kind, const ScanOptions& options) = 0;
  virtual Result<int64_t> Count(std::string_view kind, std::string_view prefix) = 0;
  // Makes every write of this transaction durable and visible. The transaction is finished.
  virtual Status Commit() = 0;
};

class MetadataStore {
 public:
  virtual ~MetadataStore() = default;
  // Starts a read-write transaction. Writers are serialized; readers see committed data.
  virtual Result<std::unique_ptr<Transaction>> BeginWrite() = 0;
  // Starts a read-only transaction over a consistent snapshot.
  virtual Result<std::unique_ptr<Transaction>> BeginRead() = 0;
};

}  // namespace openglue::store
