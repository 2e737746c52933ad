#include "catalog/catalog.h"

#include "store/transaction_store.h"

namespace openglue::catalog {

Result<std::unique_ptr<Catalog>> Catalog::Make(store::MetadataStore* store, const Clock* clock,
                                               CatalogOptions options) {
  if (store == nullptr || clock == nullptr) return Status::Internal("catalog needs a store and a clock");
  return std::unique_ptr<Catalog>(new Catalog(store, clock, std::move(options)));
}

std::unique_ptr<Catalog> Catalog::InTransaction(store::Transaction* txn) const {
  std::unique_ptr<Catalog> scoped(new Catalog(nullptr, clock_, options_));
  scoped->owned_store_ = std::make_unique<store::TransactionStore>(txn);
  scoped->store_ = scoped->owned_store_.get();
  return scoped;
}

const std::vector<std::pair<std::string, Catalog::Operation>>& Catalog::Operations() {
  static const std::vector<std::pair<std::string, Operation>> kOperations = {
      {"CreateDatabase", &Catalog::CreateDatabase},
      {"GetDatabase", &Catalog::GetDatabase},
      {"GetDatabases", &Catalog::GetDatabases},
      {"UpdateDatabase", &Catalog::UpdateDatabase},
      {"DeleteDatabase", &Catalog::DeleteDatabase},
      {"CreateTable", &Catalog::CreateTable},
      {"GetTable", &Catalog::GetTable},
      {"GetTables", &Catalog::GetTables},
      {"UpdateTable", &Catalog::UpdateTable},
      {"DeleteTable", &Catalog::DeleteTable},
      {"BatchDeleteTable", &Catalog::BatchDeleteTable},
      {"GetTableVersion", &Catalog::GetTableVersion},
      {"GetTableVersions", &Catalog::GetTableVersions},
      {"DeleteTableVersion", &Catalog::DeleteTableVersion},
      {"BatchDeleteTableVersion", &Catalog::BatchDeleteTableVersion},
      {"SearchTables", &Catalog::SearchTables},
      {"CreatePartition", &Catalog::CreatePartition},
      {"BatchCreatePartition", &Catalog::BatchCreatePartition},
      {"GetPartition", &Catalog::GetPartition},
      {"GetPartitions", &Catalog::GetPartitions},
      {"BatchGetPartition", &Catalog::BatchGetPartition},
      {"UpdatePartition", &Catalog::UpdatePartition},
      {"BatchUpdatePartition", &Catalog::BatchUpdatePartition},
      {"DeletePartition", &Catalog::DeletePartition},
      {"BatchDeletePartition", &Catalog::BatchDeletePartition},
      {"CreatePartitionIndex", &Catalog::CreatePartitionIndex},
      {"GetPartitionIndexes", &Catalog::GetPartitionIndexes},
      {"DeletePartitionIndex", &Catalog::DeletePartitionIndex},
      {"CreateUserDefinedFunction", &Catalog::CreateUserDefinedFunction},
      {"GetUserDefinedFunction", &Catalog::GetUserDefinedFunction},
      {"GetUserDefinedFunctions", &Catalog::GetUserDefinedFunctions},
      {"UpdateUserDefinedFunction", &Catalog::UpdateUserDefinedFunction},
      {"DeleteUserDefinedFunction", &Catalog::DeleteUserDefinedFunction},
      {"GetColumnStatisticsForTable", &Catalog::GetColumnStatisticsForTable},
      {"UpdateColumnStatisticsForTable", &Catalog::UpdateColumnStatisticsForTable},
      {"DeleteColumnStatisticsForTable", &Catalog::DeleteColumnStatisticsForTable},
      {"GetColumnStatisticsForPartition", &Catalog::GetColumnStatisticsForPartition},
      {"UpdateColumnStatisticsForPartition", &Catalog::UpdateColumnStatisticsForPartition},
      {"DeleteColumnStatisticsForPartition", &Catalog::DeleteColumnStatisticsForPartition},
      {"CreateConnection", &Catalog::CreateConnection},
      {"GetConnection", &Catalog::GetConnection},
      {"GetConnections", &Catalog::GetConnections},
      {"UpdateConnection", &Catalog::UpdateConnection},
      {"DeleteConnection", &Catalog::DeleteConnection},
      {"BatchDeleteConnection", &Catalog::BatchDeleteConnection},
  };
  return kOperations;
}

}  // namespace openglue::catalog
