#include "store/sqlite_store.h"
#include "store/metadata_store_conformance.h"

#include <gtest/gtest.h>

#include <atomic>
#include <cstdlib>
#include <filesystem>
#include <thread>

namespace openglue::store {
namespace {

class SqliteStoreTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char pattern[] = "/tmp/og-store-XXXXXX";
    dir_ = mkdtemp(pattern);
    Reopen();
  }
  void TearDown() override {
    store_.reset();
    std::filesystem::remove_all(dir_);
  }
  void Reopen() {
    store_.reset();
    auto made = SqliteStore::Make(dir_ + "/catalog.db");
    ASSERT_TRUE(made.ok()) << made.status().ToString();
    store_ = std::move(*made);
  }
  std::unique_ptr<Transaction> Write() {
    auto txn = store_->BeginWrite();
    EXPECT_TRUE(txn.ok());
    return std::move(*txn);
  }
  std::unique_ptr<Transaction> Read() {
    auto txn = store_->BeginRead();
    EXPECT_TRUE(txn.ok());
    return std::move(*txn);
  }

  std::string dir_;
  std::unique_ptr<SqliteStore> store_;
};

TEST_F(SqliteStoreTest, KeysComposeSoPrefixesAreRanges) {
  EXPECT_EQ(MakeKey({"a", "b"}), std::string("a\x1f" "b"));
  EXPECT_EQ(PrefixOf({"a"}), std::string("a\x1f"));
}

TEST_F(SqliteStoreTest, InsertGetPutDelete) {
  auto txn = Write();
  ASSERT_TRUE(txn->Insert("t", "k1", "v1").ok());
  EXPECT_EQ(txn->Insert("t", "k1", "other").code(), StatusCode::kAlreadyExists);
  ASSERT_TRUE(txn->Put("t", "k1", "v2").ok());
  ASSERT_TRUE(txn->Commit().ok());

  auto read = Read();
  auto got = read->Get("t", "k1");
  ASSERT_TRUE(got.ok());
  ASSERT_TRUE(got->has_value());
  EXPECT_EQ(**got, "v2");
  auto other_kind = read->Get("u", "k1");
  ASSERT_TRUE(other_kind.ok());
  EXPECT_FALSE(other_kind->has_value());
  read.reset();

  txn = Write();
  auto deleted = txn->Delete("t", "k1");
  ASSERT_TRUE(deleted.ok());
  EXPECT_TRUE(*deleted);
  auto again = txn->Delete("t", "k1");
  ASSERT_TRUE(again.ok());
  EXPECT_FALSE(*again);
  ASSERT_TRUE(txn->Commit().ok());
}

TEST_F(SqliteStoreTest, UncommittedWritesRollBack) {
  {
    auto txn = Write();
    ASSERT_TRUE(txn->Put("t", "k", "v").ok());
    // destroyed without Commit
  }
  auto read = Read();
  auto got = read->Get("t", "k");
  ASSERT_TRUE(got.ok());
  EXPECT_FALSE(got->has_value());
}

TEST_F(SqliteStoreTest, ScanHonoursPrefixStartAfterAndLimit) {
  auto txn = Write();
  for (const char* k : {"a\x1f" "1", "a\x1f" "2", "a\x1f" "3", "ab", "b\x1f" "1"})
    ASSERT_TRUE(txn->Put("t", k, std::string("doc-") + k).ok());
  ASSERT_TRUE(txn->Commit().ok());

  auto read = Read();
  auto rows = read->Scan("t", ScanOptions{PrefixOf({"a"}), "", -1, false});
  ASSERT_TRUE(rows.ok());
  ASSERT_EQ(rows->size(), 3u);
  EXPECT_EQ((*rows)[0].key, "a\x1f" "1");
  EXPECT_EQ((*rows)[0].doc, "doc-a\x1f" "1");

  rows = read->Scan("t", ScanOptions{PrefixOf({"a"}), "a\x1f" "1", 1, true});
  ASSERT_TRUE(rows.ok());
  ASSERT_EQ(rows->size(), 1u);
  EXPECT_EQ((*rows)[0].key, "a\x1f" "2");
  EXPECT_TRUE((*rows)[0].doc.empty());

  auto count = read->Count("t", PrefixOf({"a"}));
  ASSERT_TRUE(count.ok());
  EXPECT_EQ(*count, 3);
}

TEST_F(SqliteStoreTest, DeletePrefixRemovesOnlyThatRange) {
  auto txn = Write();
  for (const char* k : {"a\x1f" "1", "a\x1f" "2", "ab", "b"}) ASSERT_TRUE(txn->Put("t", k, "v").ok());
  auto removed = txn->DeletePrefix("t", PrefixOf({"a"}));
  ASSERT_TRUE(removed.ok());
  EXPECT_EQ(*removed, 2);
  ASSERT_TRUE(txn->Commit().ok());
  auto read = Read();
  auto rows = read->Scan("t", ScanOptions{});
  ASSERT_TRUE(rows.ok());
  ASSERT_EQ(rows->size(), 2u);
  EXPECT_EQ((*rows)[0].key, "ab");
}

TEST_F(SqliteStoreTest, CommittedDataSurvivesReopen) {
  auto txn = Write();
  ASSERT_TRUE(txn->Put("t", "durable", "yes").ok());
  ASSERT_TRUE(txn->Commit().ok());
  txn.reset();
  Reopen();
  auto read = Read();
  auto got = read->Get("t", "durable");
  ASSERT_TRUE(got.ok());
  ASSERT_TRUE(got->has_value());
  EXPECT_EQ(**got, "yes");
}

TEST_F(SqliteStoreTest, ReadOnlyTransactionRefusesWrites) {
  auto read = Read();
  EXPECT_FALSE(read->Put("t", "k", "v").ok());
}

TEST_F(SqliteStoreTest, ReadersSeeOnlyCommittedStateWhileAWriterRuns) {
  std::atomic<bool> stop{false};
  std::atomic<int> torn{0};
  std::thread writer([&] {
    for (int i = 0; i < 200; ++i) {
      auto txn = Write();
      // Two keys always change together.
      ASSERT_TRUE(txn->Put("t", "x", std::to_string(i)).ok());
      ASSERT_TRUE(txn->Put("t", "y", std::to_string(i)).ok());
      ASSERT_TRUE(txn->Commit().ok());
    }
    stop = true;
  });
  std::vector<std::thread> readers;
  for (int r = 0; r < 3; ++r) {
    readers.emplace_back([&] {
      while (!stop) {
        auto read = Read();
        auto x = read->Get("t", "x");
        auto y = read->Get("t", "y");
        if (!x.ok() || !y.ok() || x->value_or("") != y->value_or("")) ++torn;
      }
    });
  }
  writer.join();
  for (auto& t : readers) t.join();
  EXPECT_EQ(torn.load(), 0);
}

TEST_F(SqliteStoreTest, OpeningAnUnwritablePathFailsCleanly) {
  auto made = SqliteStore::Make("/proc/definitely/not/here/catalog.db");
  EXPECT_FALSE(made.ok());
  EXPECT_EQ(made.status().code(), StatusCode::kInvalidInput);
}

// --- The reader pool is bounded and shrinks (issue 7) ---------------------------------------

class SqliteReaderPoolTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char pattern[] = "/tmp/og-pool-XXXXXX";
    dir_ = mkdtemp(pattern);
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }
  std::unique_ptr<SqliteStore> Make(SqliteStoreOptions options) {
    auto made = SqliteStore::Make(dir_ + "/catalog.db", options);
    EXPECT_TRUE(made.ok());
    return made.ok() ? std::move(*made) : nullptr;
  }
  std::string dir_;
};

TEST_F(SqliteReaderPoolTest, ReadersNeverExceedTheCapAndAWaitingReadGetsAReleasedOne) {
  SqliteStoreOptions options;
  options.max_readers = 2;
  options.reader_wait = std::chrono::milliseconds(200);
  auto store = Make(options);
  ASSERT_TRUE(store);
  EXPECT_EQ(store->max_readers(), 2);
  auto a = store->BeginRead();
  auto b = store->BeginRead();
  ASSERT_TRUE(a.ok() && b.ok());
  EXPECT_EQ(store->open_readers(), 2);
  // A third read waits, then times out: no third connection is opened.
  auto started = std::chrono::steady_clock::now();
  auto c = store->BeginRead();
  EXPECT_FALSE(c.ok());
  EXPECT_EQ(c.status().code(), StatusCode::kOperationTimeout);
  EXPECT_GE(std::chrono::steady_clock::now() - started, std::chrono::milliseconds(150));
  EXPECT_EQ(store->open_readers(), 2);
  // A read waiting (up to 200 ms) while another ends gets the released connection.
  std::thread releaser([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    a->reset();
  });
  auto d = store->BeginRead();
  releaser.join();
  EXPECT_TRUE(d.ok());
  EXPECT_EQ(store->open_readers(), 2);
}

TEST_F(SqliteReaderPoolTest, ManyConcurrentReadsStayWithinTheCap) {
  SqliteStoreOptions options;
  options.max_readers = 3;
  auto store = Make(options);
  ASSERT_TRUE(store);
  std::atomic<int> failures{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < 16; ++t) {
    threads.emplace_back([&] {
      for (int i = 0; i < 50; ++i) {
        auto read = store->BeginRead();
        if (!read.ok() || !(*read)->Get("t", "x").ok()) ++failures;
      }
    });
  }
  for (auto& t : threads) t.join();
  EXPECT_EQ(failures.load(), 0);
  EXPECT_LE(store->open_readers(), 3);
}

TEST_F(SqliteReaderPoolTest, IdleReadersAreClosed) {
  SqliteStoreOptions options;
  options.max_readers = 8;
  options.reader_idle = std::chrono::milliseconds(100);
  auto store = Make(options);
  ASSERT_TRUE(store);
  {
    std::vector<std::unique_ptr<Transaction>> reads;
    for (int i = 0; i < 8; ++i) {
      auto read = store->BeginRead();
      ASSERT_TRUE(read.ok());
      reads.push_back(std::move(*read));
    }
    EXPECT_EQ(store->open_readers(), 8);
  }
  EXPECT_EQ(store->open_readers(), 8);  // just released: still warm
  std::this_thread::sleep_for(std::chrono::milliseconds(150));
  EXPECT_EQ(store->open_readers(), 0);
  auto read = store->BeginRead();
  ASSERT_TRUE(read.ok());
  EXPECT_EQ(store->open_readers(), 1);
}

TEST_F(SqliteReaderPoolTest, DefaultCapIsASmallMultipleOfCores) {
  auto store = Make({});
  ASSERT_TRUE(store);
  int cores = static_cast<int>(std::thread::hardware_concurrency());
  EXPECT_EQ(store->max_readers(), std::max(4, 2 * cores));
}

// The MetadataStore conformance suite (store/metadata_store_conformance.h) on SQLite.
INSTANTIATE_TEST_SUITE_P(
    Sqlite, MetadataStoreConformance,
    ::testing::Values(MetadataStoreFactory{
        "sqlite", [](const std::string& dir) -> Result<std::unique_ptr<MetadataStore>> {
          OG_ASSIGN_OR_RETURN(auto store, SqliteStore::Make(dir + "/catalog.db"));
          return std::unique_ptr<MetadataStore>(std::move(store));
        }}),
    [](const ::testing::TestParamInfo<MetadataStoreFactory>& info) { return info.param.name; });

}  // namespace
}  // namespace openglue::store
