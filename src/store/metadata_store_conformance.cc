#include "store/metadata_store_conformance.h"

#include <atomic>
#include <cstdlib>
#include <filesystem>
#include <thread>
#include <vector>

namespace openglue::store {

void MetadataStoreConformance::SetUp() {
  char pattern[] = "/tmp/og-conformance-XXXXXX";
  char* made = mkdtemp(pattern);
  ASSERT_NE(made, nullptr);
  dir_ = made;
  Reopen();
}

void MetadataStoreConformance::TearDown() {
  store_.reset();
  std::error_code ec;
  std::filesystem::remove_all(dir_, ec);
}

void MetadataStoreConformance::Reopen() {
  store_.reset();
  auto opened = GetParam().open(dir_);
  ASSERT_TRUE(opened.ok()) << opened.status().ToString();
  store_ = std::move(*opened);
}

std::unique_ptr<Transaction> MetadataStoreConformance::Write() {
  auto txn = store_->BeginWrite();
  EXPECT_TRUE(txn.ok()) << txn.status().ToString();
  return txn.ok() ? std::move(*txn) : nullptr;
}

std::unique_ptr<Transaction> MetadataStoreConformance::Read() {
  auto txn = store_->BeginRead();
  EXPECT_TRUE(txn.ok()) << txn.status().ToString();
  return txn.ok() ? std::move(*txn) : nullptr;
}

std::string MetadataStoreConformance::ReadDoc(std::string_view kind, std::string_view key) {
  auto txn = Read();
  if (!txn) return "<no reader>";
  auto doc = txn->Get(kind, key);
  if (!doc.ok()) return "<error " + doc.status().ToString() + ">";
  return doc->has_value() ? **doc : "<absent>";
}

namespace {

std::vector<std::string> Keys(const std::vector<Row>& rows) {
  std::vector<std::string> keys;
  for (const Row& row : rows) keys.push_back(row.key);
  return keys;
}

TEST_P(MetadataStoreConformance, InsertPutGetDelete) {
  auto txn = Write();
  ASSERT_TRUE(txn);
  ASSERT_TRUE(txn->Insert("t", "k", "v1").ok());
  EXPECT_EQ(txn->Insert("t", "k", "other").code(), StatusCode::kAlreadyExists);
  auto got = txn->Get("t", "k");  // a transaction reads its own writes
  ASSERT_TRUE(got.ok());
  EXPECT_EQ(got->value_or("<absent>"), "v1");
  ASSERT_TRUE(txn->Put("t", "k", "v2").ok());  // replaces
  ASSERT_TRUE(txn->Put("t", "new", "n").ok());  // inserts
  ASSERT_TRUE(txn->Commit().ok());
  EXPECT_EQ(ReadDoc("t", "k"), "v2");
  EXPECT_EQ(ReadDoc("t", "new"), "n");
  EXPECT_EQ(ReadDoc("t", "missing"), "<absent>");
  EXPECT_EQ(ReadDoc("other_kind", "k"), "<absent>");  // kinds are separate collections

  txn = Write();
  auto existed = txn->Delete("t", "k");
  ASSERT_TRUE(existed.ok());
  EXPECT_TRUE(*existed);
  existed = txn->Delete("t", "k");
  ASSERT_TRUE(existed.ok());
  EXPECT_FALSE(*existed);
  ASSERT_TRUE(txn->Insert("t", "k", "again").ok());  // a deleted key may be inserted again
  ASSERT_TRUE(txn->Commit().ok());
  EXPECT_EQ(ReadDoc("t", "k"), "again");
}

TEST_P(MetadataStoreConformance, BinaryKeysAndDocumentsRoundTrip) {
  const std::string key("a\0b\x1f\xff", 5);
  const std::string doc("\0\x01\xfe{}", 5);
  auto txn = Write();
  ASSERT_TRUE(txn->Put("t", key, doc).ok());
  ASSERT_TRUE(txn->Put("t", std::string("a\0a", 3), "").ok());  // an empty document
  ASSERT_TRUE(txn->Commit().ok());
  EXPECT_EQ(ReadDoc("t", key), doc);
  EXPECT_EQ(ReadDoc("t", std::string("a\0a", 3)), "");
  EXPECT_EQ(ReadDoc("t", "a"), "<absent>");
}

TEST_P(MetadataStoreConformance, ScansAreInByteOrderWithinThePrefix) {
  auto txn = Write();
  // Byte order: unsigned, so 0xFF sorts last and "a\x1f" (a key separator) before "a0".
  for (const std::string& key : std::vector<std::string>{"b", "a\x1f" "2", "a\x1f" "10", "a0", std::string("a\x1f\xff"), "a",
                                std::string("a\x1f\x01"), "c\x1f" "1"}) {
    ASSERT_TRUE(txn->Put("t", key, "doc:" + key).ok());
  }
  ASSERT_TRUE(txn->Put("u", "a\x1f" "3", "other kind").ok());
  ASSERT_TRUE(txn->Commit().ok());

  auto read = Read();
  auto all = read->Scan("t", ScanOptions{});
  ASSERT_TRUE(all.ok());
  EXPECT_EQ(Keys(*all), (std::vector<std::string>{"a", std::string("a\x1f\x01"), "a\x1f" "10",
                                                  "a\x1f" "2", std::string("a\x1f\xff"), "a0",
                                                  "b", "c\x1f" "1"}));
  EXPECT_EQ((*all)[0].doc, "doc:a");

  auto prefixed = read->Scan("t", ScanOptions{PrefixOf({"a"}), "", -1, false});
  ASSERT_TRUE(prefixed.ok());
  EXPECT_EQ(Keys(*prefixed), (std::vector<std::string>{std::string("a\x1f\x01"), "a\x1f" "10",
                                                       "a\x1f" "2", std::string("a\x1f\xff")}));
  // start_after is exclusive, limit caps, keys_only leaves documents empty.
  auto page = read->Scan("t", ScanOptions{PrefixOf({"a"}), "a\x1f" "10", 2, true});
  ASSERT_TRUE(page.ok());
  EXPECT_EQ(Keys(*page), (std::vector<std::string>{"a\x1f" "2", std::string("a\x1f\xff")}));
  for (const Row& row : *page) EXPECT_TRUE(row.doc.empty());
  // A start_after before the prefix starts at the prefix; one past it gives nothing.
  auto before = read->Scan("t", ScanOptions{PrefixOf({"a"}), "", 1, false});
  ASSERT_TRUE(before.ok());
  EXPECT_EQ(Keys(*before), (std::vector<std::string>{std::string("a\x1f\x01")}));
  auto past = read->Scan("t", ScanOptions{PrefixOf({"a"}), "b", -1, false});
  ASSERT_TRUE(past.ok());
  EXPECT_TRUE(past->empty());
  // A prefix of all 0xFF bytes has no upper bound key but still selects only its own range.
  auto high = read->Scan("t", ScanOptions{std::string("a\x1f\xff"), "", -1, false});
  ASSERT_TRUE(high.ok());
  EXPECT_EQ(Keys(*high), (std::vector<std::string>{std::string("a\x1f\xff")}));

  auto count = read->Count("t", PrefixOf({"a"}));
  ASSERT_TRUE(count.ok());
  EXPECT_EQ(*count, 4);
  count = read->Count("t", "");
  ASSERT_TRUE(count.ok());
  EXPECT_EQ(*count, 8);
}

TEST_P(MetadataStoreConformance, DeletePrefixRemovesExactlyItsRange) {
  auto txn = Write();
  for (const char* key : {"a", "a\x1f" "1", "a\x1f" "2", "ab", "b\x1f" "1"})
    ASSERT_TRUE(txn->Put("t", key, "x").ok());
  ASSERT_TRUE(txn->Put("u", "a\x1f" "1", "x").ok());
  auto removed = txn->DeletePrefix("t", PrefixOf({"a"}));
  ASSERT_TRUE(removed.ok());
  EXPECT_EQ(*removed, 2);
  ASSERT_TRUE(txn->Commit().ok());
  auto read = Read();
  auto left = read->Scan("t", ScanOptions{});
  ASSERT_TRUE(left.ok());
  EXPECT_EQ(Keys(*left), (std::vector<std::string>{"a", "ab", "b\x1f" "1"}));
  EXPECT_EQ(ReadDoc("u", "a\x1f" "1"), "x");
}

TEST_P(MetadataStoreConformance, UncommittedWritesAreInvisibleAndRolledBack) {
  {
    auto txn = Write();
    ASSERT_TRUE(txn->Put("t", "k", "draft").ok());
    EXPECT_EQ(ReadDoc("t", "k"), "<absent>");  // not visible before Commit
  }  // destroyed without Commit: rolled back
  EXPECT_EQ(ReadDoc("t", "k"), "<absent>");
  auto txn = Write();  // and the writer slot is free again
  ASSERT_TRUE(txn);
  ASSERT_TRUE(txn->Put("t", "k", "final").ok());
  ASSERT_TRUE(txn->Commit().ok());
  EXPECT_EQ(ReadDoc("t", "k"), "final");
}

TEST_P(MetadataStoreConformance, ReadersSeeASnapshot) {
  auto txn = Write();
  ASSERT_TRUE(txn->Put("t", "x", "1").ok());
  ASSERT_TRUE(txn->Put("t", "y", "1").ok());
  ASSERT_TRUE(txn->Commit().ok());
  auto reader = Read();
  auto x = reader->Get("t", "x");
  ASSERT_TRUE(x.ok());
  EXPECT_EQ(x->value_or(""), "1");
  txn = Write();
  ASSERT_TRUE(txn->Put("t", "y", "2").ok());
  ASSERT_TRUE(txn->Put("t", "z", "2").ok());
  ASSERT_TRUE(txn->Commit().ok());
  // The reader that started before the commit keeps its snapshot.
  auto y = reader->Get("t", "y");
  ASSERT_TRUE(y.ok());
  EXPECT_EQ(y->value_or(""), "1");
  auto z = reader->Get("t", "z");
  ASSERT_TRUE(z.ok());
  EXPECT_FALSE(z->has_value());
  EXPECT_EQ(ReadDoc("t", "y"), "2");
}

TEST_P(MetadataStoreConformance, MisuseIsAnErrorNotACrash) {
  auto reader = Read();
  EXPECT_FALSE(reader->Put("t", "k", "v").ok());
  EXPECT_FALSE(reader->Insert("t", "k", "v").ok());
  EXPECT_FALSE(reader->Delete("t", "k").ok());
  EXPECT_FALSE(reader->DeletePrefix("t", "").ok());
  auto txn = Write();
  ASSERT_TRUE(txn->Commit().ok());
  EXPECT_FALSE(txn->Put("t", "k", "v").ok());
  EXPECT_FALSE(txn->Commit().ok());
  EXPECT_EQ(ReadDoc("t", "k"), "<absent>");
}

TEST_P(MetadataStoreConformance, ConcurrentWritersAreSerializedWithoutLostUpdates) {
  auto init = Write();
  ASSERT_TRUE(init->Put("t", "counter", "0").ok());
  ASSERT_TRUE(init->Commit().ok());
  init.reset();
  constexpr int kThreads = 4;
  constexpr int kIncrements = 25;
  std::atomic<int> failures{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&] {
      for (int i = 0; i < kIncrements; ++i) {
        auto txn = store_->BeginWrite();
        if (!txn.ok()) { ++failures; continue; }
        auto doc = (*txn)->Get("t", "counter");
        if (!doc.ok() || !doc->has_value()) { ++failures; continue; }
        int value = std::atoi((*doc)->c_str());
        if (!(*txn)->Put("t", "counter", std::to_string(value + 1)).ok() || !(*txn)->Commit().ok())
          ++failures;
      }
    });
  }
  for (auto& thread : threads) thread.join();
  EXPECT_EQ(failures.load(), 0);
  EXPECT_EQ(ReadDoc("t", "counter"), std::to_string(kThreads * kIncrements));
}

TEST_P(MetadataStoreConformance, InsertRacesHaveExactlyOneWinner) {
  std::atomic<int> won{0}, lost{0}, other{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < 6; ++t) {
    threads.emplace_back([&, t] {
      auto txn = store_->BeginWrite();
      if (!txn.ok()) { ++other; return; }
      Status st = (*txn)->Insert("t", "contested", std::to_string(t));
      if (st.ok()) st = (*txn)->Commit();
      if (st.ok()) ++won;
      else if (st.code() == StatusCode::kAlreadyExists) ++lost;
      else ++other;
    });
  }
  for (auto& thread : threads) thread.join();
  EXPECT_EQ(won.load(), 1);
  EXPECT_EQ(lost.load(), 5);
  EXPECT_EQ(other.load(), 0);
}

TEST_P(MetadataStoreConformance, CommittedWritesSurviveReopenAndUncommittedDoNot) {
  auto txn = Write();
  ASSERT_TRUE(txn->Put("t", "kept", "yes").ok());
  ASSERT_TRUE(txn->Commit().ok());
  txn = Write();
  ASSERT_TRUE(txn->Put("t", "dropped", "no").ok());
  ASSERT_TRUE(txn->Delete("t", "kept").ok());
  txn.reset();  // never committed
  Reopen();
  EXPECT_EQ(ReadDoc("t", "kept"), "yes");
  EXPECT_EQ(ReadDoc("t", "dropped"), "<absent>");
  // And the reopened store accepts writes.
  txn = Write();
  ASSERT_TRUE(txn->Put("t", "after", "reopen").ok());
  ASSERT_TRUE(txn->Commit().ok());
  Reopen();
  EXPECT_EQ(ReadDoc("t", "after"), "reopen");
}

}  // namespace
}  // namespace openglue::store
