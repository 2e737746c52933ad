#include "store/transaction_store.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>

#include "store/sqlite_store.h"

namespace openglue::store {
namespace {

class TransactionStoreTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char pattern[] = "/tmp/og-txnstore-XXXXXX";
    dir_ = mkdtemp(pattern);
    auto made = SqliteStore::Make(dir_ + "/catalog.db");
    ASSERT_TRUE(made.ok()) << made.status().ToString();
    store_ = std::move(*made);
  }
  void TearDown() override {
    store_.reset();
    std::filesystem::remove_all(dir_);
  }
  std::optional<std::string> Committed(const std::string& key) {
    auto txn = store_->BeginRead();
    EXPECT_TRUE(txn.ok());
    auto doc = (*txn)->Get("k", key);
    EXPECT_TRUE(doc.ok());
    return *doc;
  }
  std::string dir_;
  std::unique_ptr<SqliteStore> store_;
};

TEST_F(TransactionStoreTest, ViewsShareTheTransactionAndCommitOnlyWithIt) {
  auto outer = store_->BeginWrite();
  ASSERT_TRUE(outer.ok());
  TransactionStore scoped(outer->get());
  for (const char* key : {"a", "b"}) {
    auto view = scoped.BeginWrite();
    ASSERT_TRUE(view.ok());
    ASSERT_TRUE((*view)->Put("k", key, "doc").ok());
    ASSERT_TRUE((*view)->Commit().ok());
  }
  auto reader = scoped.BeginRead();
  ASSERT_TRUE(reader.ok());
  auto count = (*reader)->Count("k", "");
  ASSERT_TRUE(count.ok());
  EXPECT_EQ(*count, 2);  // a view reads what the earlier views wrote
  EXPECT_FALSE(Committed("a"));  // the views' Commit made nothing durable
  ASSERT_TRUE((*outer)->Commit().ok());
  EXPECT_EQ(Committed("a"), "doc");
  EXPECT_EQ(Committed("b"), "doc");
}

TEST_F(TransactionStoreTest, DroppingTheTransactionRollsBackEveryView) {
  {
    auto outer = store_->BeginWrite();
    ASSERT_TRUE(outer.ok());
    TransactionStore scoped(outer->get());
    auto view = scoped.BeginWrite();
    ASSERT_TRUE(view.ok());
    ASSERT_TRUE((*view)->Put("k", "a", "doc").ok());
    ASSERT_TRUE((*view)->Commit().ok());
  }
  EXPECT_FALSE(Committed("a"));
}

}  // namespace
}  // namespace openglue::store
