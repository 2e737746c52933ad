// Catalog: the Glue Data Catalog's operations over a MetadataStore.
//
// Each operation takes the Glue request document (already checked against the service model by
// the api module: member types, required members and length/range limits) and returns the Glue
// response document, or a Status whose code names the Glue error (EntityNotFound,
// AlreadyExists, InvalidInput, ConcurrentModification, ResourceNumberLimitExceeded, Internal).
// Semantic checks the model cannot express (a partition's value count, an index's keys, a bad
// Expression, a bad NextToken) are made here.
//
// Tags on catalog resources are served by resource::TagService; see RegisterTaggableResources.
//
// Every write runs in one store transaction: it applies whole or not at all, and is durable
// when the operation returns. Batch operations follow resource/batch.h: each item applies on its
// own, a failed item is reported in the response's Errors (BatchGetPartition leaves it out) and
// the call succeeds; only an Internal failure fails the whole call.
//
// Names of databases, tables, functions and indexes are folded to lowercase, as Glue does;
// connection names are kept as given. CatalogId selects a catalog namespace (default: the
// configured account id).
//
// Connections: the secret ConnectionProperties (PASSWORD, ENCRYPTED_PASSWORD and the Kafka
// passwords, see IsSecretConnectionProperty) are sealed with CatalogOptions::connection_cipher
// before they reach the store and opened only for a GetConnection(s) without HidePassword. The
// catalog never logs them or puts them in an error message.
//
// Thread-safe: operations may be called concurrently from many threads.
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "catalog/connection_cipher.h"
#include "common/clock.h"
#include "common/json.h"
#include "common/random.h"
#include "common/status.h"
#include "common/thread_annotations.h"
#include "resource/tags.h"
#include "store/metadata_store.h"

namespace openglue::catalog {

struct CatalogOptions {
  std::string account_id = "000000000000";
  std::string region = "us-east-1";
  // Seals the secret properties of connections (borrowed; outlives the catalog). Null: a
  // connection with a secret property is refused (InvalidInput).
  const ConnectionCipher* connection_cipher = nullptr;
  // Nonces for the cipher (borrowed, thread-safe). Null: the system CSPRNG.
  Random* random = nullptr;
};

// Serialized response bodies, each remembered together with the stored document it was made
// from and returned only for that same document (byte for byte), so a hit is exactly what
// parsing and serializing the document again would give, and a changed document is a miss.
// Bounded: an entry over kMaxEntryBytes is not kept, and the whole cache is cleared when it
// would grow past kMaxBytes. Thread-safe.
class SerializedResponseCache {
 public:
  static constexpr size_t kMaxEntryBytes = 256 << 10;
  static constexpr size_t kMaxBytes = 16 << 20;

  // The body remembered under `key` if it was made from `doc`.
  std::optional<std::string> Find(const std::string& key, const std::string& doc)
      EXCLUDES(mutex_);
  // Remembers `body`, made from `doc`, under `key` (replacing what was there).
  void Put(const std::string& key, std::string doc, std::string body) EXCLUDES(mutex_);

 private:
  struct Entry {
    std::string doc;
    std::string body;
  };
  Mutex mutex_;
  std::unordered_map<std::string, Entry> entries_ GUARDED_BY(mutex_);
  size_t bytes_ GUARDED_BY(mutex_) = 0;  // keys, documents and bodies held
};

// True for the ConnectionProperties keys whose values are secrets: sealed at rest and left
// out by HidePassword.
bool IsSecretConnectionProperty(const std::string& key);

class Catalog {
 public:
  // `store` and `clock` are borrowed and must outlive the catalog.
  static Result<std::unique_ptr<Catalog>> Make(store::MetadataStore* store, const Clock* clock,
                                               CatalogOptions options);

  using Operation = Result<Json> (Catalog::*)(const Json& request);
  // The Glue operation names this module implements, with their handlers.
  static const std::vector<std::pair<std::string, Operation>>& Operations();

  // Databases
  Result<Json> CreateDatabase(const Json& request);
  Result<Json> GetDatabase(const Json& request);
  Result<Json> GetDatabases(const Json& request);
  Result<Json> UpdateDatabase(const Json& request);
  Result<Json> DeleteDatabase(const Json& request);
  // Tables and their versions
  Result<Json> CreateTable(const Json& request);
  Result<Json> GetTable(const Json& request);
  // GetTable's response, serialized: the same bytes as DumpJson(*GetTable(request)) and the
  // same errors, without parsing and re-serializing a table document that has not changed
  // since it was last served (SerializedResponseCache).
  Result<std::string> GetTableResponse(const Json& request);
  Result<Json> GetTables(const Json& request);
  Result<Json> UpdateTable(const Json& request);
  Result<Json> DeleteTable(const Json& request);
  Result<Json> BatchDeleteTable(const Json& request);
  Result<Json> GetTableVersion(const Json& request);
  Result<Json> GetTableVersions(const Json& request);
  Result<Json> DeleteTableVersion(const Json& request);
  Result<Json> BatchDeleteTableVersion(const Json& request);
  Result<Json> SearchTables(const Json& request);
  // Partitions and partition indexes
  Result<Json> CreatePartition(const Json& request);
  Result<Json> BatchCreatePartition(const Json& request);
  Result<Json> GetPartition(const Json& request);
  Result<Json> GetPartitions(const Json& request);
  Result<Json> BatchGetPartition(const Json& request);
  Result<Json> UpdatePartition(const Json& request);
  Result<Json> BatchUpdatePartition(const Json& request);
  Result<Json> DeletePartition(const Json& request);
  Result<Json> BatchDeletePartition(const Json& request);
  Result<Json> CreatePartitionIndex(const Json& request);
  Result<Json> GetPartitionIndexes(const Json& request);
  Result<Json> DeletePartitionIndex(const Json& request);
  // User-defined functions
  Result<Json> CreateUserDefinedFunction(const Json& request);
  Result<Json> GetUserDefinedFunction(const Json& request);
  Result<Json> GetUserDefinedFunctions(const Json& request);
  Result<Json> UpdateUserDefinedFunction(const Json& request);
  Result<Json> DeleteUserDefinedFunction(const Json& request);
  // Column statistics
  Result<Json> GetColumnStatisticsForTable(const Json& request);
  Result<Json> UpdateColumnStatisticsForTable(const Json& request);
  Result<Json> DeleteColumnStatisticsForTable(const Json& request);
  Result<Json> GetColumnStatisticsForPartition(const Json& request);
  Result<Json> UpdateColumnStatisticsForPartition(const Json& request);
  Result<Json> DeleteColumnStatisticsForPartition(const Json& request);
  // Connections
  Result<Json> CreateConnection(const Json& request);
  Result<Json> GetConnection(const Json& request);
  Result<Json> GetConnections(const Json& request);
  Result<Json> UpdateConnection(const Json& request);
  Result<Json> DeleteConnection(const Json& request);
  Result<Json> BatchDeleteConnection(const Json& request);

  // A catalog with this one's options whose operations all run in `txn` (store::TransactionStore):
  // they see each other's writes, and none is durable or visible to others until the caller
  // commits `txn`; dropping it undoes them all. `txn` is borrowed and must outlive the returned
  // catalog, which belongs to `txn`'s thread (not thread-safe). The crawler writes a whole crawl
  // this way, so that a crash never leaves a half-written table.
  std::unique_ptr<Catalog> InTransaction(store::Transaction* txn) const;

  // Checks that every sealed connection secret in the store names `cipher`'s key (null: that
  // there is none). InvalidInput naming a connection and both key ids otherwise. The server calls
  // it at startup so a wrong or lost key file stops it with a clear message, not later reads.
  Status CheckConnectionKey(const ConnectionCipher* cipher) const;

 private:
  Catalog(store::MetadataStore* store, const Clock* clock, CatalogOptions options)
      : store_(store), clock_(clock), options_(std::move(options)) {}

  // The stored connection document from a ConnectionInput: secrets sealed.
  Result<Json> ConnectionFromInput(const Json& input, const std::string& catalog_id,
                                   double creation_time, double update_time);
  // The wire Connection from a stored document: secrets opened, or left out when `hide`.
  Result<Json> ConnectionToWire(Json stored, const std::string& catalog_id, bool hide) const;

  store::MetadataStore* store_;
  std::unique_ptr<store::MetadataStore> owned_store_;  // InTransaction's view (store_ points to it)
  const Clock* clock_;
  CatalogOptions options_;
  SystemRandom system_random_;
  SerializedResponseCache table_responses_;  // GetTableResponse's, keyed by the table's store key
};

// Makes the catalog's resources taggable through `tags` (resource::TagService serves
// TagResource, UntagResource and GetTags): database/<db>, table/<db>/<table> and
// userDefinedFunction/<db>/<function>, names folded to lowercase, and connection/<name> (as
// given). Call before serving.
void RegisterTaggableResources(resource::TagService* tags);

}  // namespace openglue::catalog
