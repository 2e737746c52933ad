// TransactionStore: a MetadataStore whose every transaction is one borrowed Transaction.
//
// It makes many operations of a module built over a MetadataStore (the catalog's CreateTable,
// BatchCreatePartition, UpdateTable, ...) one change: each operation's BeginWrite and BeginRead
// return a view of the borrowed transaction whose Commit() does nothing, so the operations see
// each other's writes, and none is durable or visible to other readers until the owner commits
// the borrowed transaction itself (or drops it, rolling every one of them back).
//
// A view destroyed without Commit() rolls nothing back: an operation that fails midway may have
// left writes in the transaction, so an owner that sees a failure drops the transaction rather
// than commit it.
//
// Not thread-safe: the borrowed transaction belongs to one thread, and so do the store and its
// views. The transaction must outlive the store and every view.
#pragma once

#include <memory>

#include "store/metadata_store.h"

namespace openglue::store {

class TransactionStore final : public MetadataStore {
 public:
  // `txn` is borrowed (not null).
  explicit TransactionStore(Transaction* txn) : txn_(txn) {}

  // Both: a view of the borrowed transaction (never fails).
  Result<std::unique_ptr<Transaction>> BeginWrite() override;
  Result<std::unique_ptr<Transaction>> BeginRead() override;

 private:
  Transaction* txn_;
};

}  // namespace openglue::store
