#include "store/transaction_store.h"

namespace openglue::store {
namespace {

// Forwards everything to the borrowed transaction; Commit() leaves it to the owner.
class TransactionView final : public Transaction {
 public:
  explicit TransactionView(Transaction* txn) : txn_(txn) {}
  Result<std::optional<std::string>> Get(std::string_view kind, std::string_view key) override {
    return txn_->Get(kind, key);
  }
  Status Put(std::string_view kind, std::string_view key, std::string_view doc) override {
    return txn_->Put(kind, key, doc);
  }
  Status Insert(std::string_view kind, std::string_view key, std::string_view doc) override {
    return txn_->Insert(kind, key, doc);
  }
  Result<bool> Delete(std::string_view kind, std::string_view key) override { return txn_->Delete(kind, key); }
  Result<int64_t> DeletePrefix(std::string_view kind, std::string_view prefix) override {
    return txn_->DeletePrefix(kind, prefix);
  }
  Result<std::vector<Row>> Scan(std::string_view kind, const ScanOptions& options) override {
    return txn_->Scan(kind, options);
  }
  Result<int64_t> Count(std::string_view kind, std::string_view prefix) override {
    return txn_->Count(kind, prefix);
  }
  Status Commit() override { return Status::OK(); }

 private:
  Transaction* txn_;
};

}  // namespace

Result<std::unique_ptr<Transaction>> TransactionStore::BeginWrite() {
  return std::unique_ptr<Transaction>(new TransactionView(txn_));
}

Result<std::unique_ptr<Transaction>> TransactionStore::BeginRead() {
  return std::unique_ptr<Transaction>(new TransactionView(txn_));
}

}  // namespace openglue::store
