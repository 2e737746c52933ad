#include "storage/object_store_conformance.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdlib>
#include <thread>
#include <vector>

#include "common/random.h"

namespace openglue::storage {

void ObjectStoreConformance::SetUp() {
  auto made = GetParam().make();
  if (!made.ok() && made.status().code() == StatusCode::kUnknownOperation)
    GTEST_SKIP() << made.status().message();
  ASSERT_TRUE(made.ok()) << made.status().ToString();
  store_ = std::move(*made);
  SystemRandom random;
  bucket_ = "og-conf-" + random.Hex(6);
  ASSERT_TRUE(store_->CreateBucket(bucket_).ok());
}

void ObjectStoreConformance::Put(const std::string& key, const std::string& data) {
  Status st = store_->Write(bucket_, key, data);
  ASSERT_TRUE(st.ok()) << key << ": " << st.ToString();
}

void ObjectStoreConformance::ListAll(const std::string& prefix, const std::string& delimiter,
                                     int page, std::vector<std::string>* keys,
                                     std::vector<std::string>* prefixes) {
  ListRequest request;
  request.bucket = bucket_;
  request.prefix = prefix;
  request.delimiter = delimiter;
  request.max_keys = page;
  for (int pages = 0; pages < 1000; ++pages) {
    auto result = store_->List(request);
    ASSERT_TRUE(result.ok()) << result.status().ToString();
    EXPECT_LE(static_cast<int>(result->objects.size() + result->common_prefixes.size()), page);
    for (const ObjectInfo& info : result->objects) keys->push_back(info.key);
    for (const std::string& p : result->common_prefixes) prefixes->push_back(p);
    if (result->next_continuation.empty()) return;
    request.continuation = result->next_continuation;
  }
  FAIL() << "List never returned its last page";
}

namespace {

bool IsNotFound(const Status& st) { return st.code() == StatusCode::kEntityNotFound; }

}  // namespace

TEST_P(ObjectStoreConformance, WriteThenStatAndRead) {
  Put("a.txt", "hello");
  auto info = store_->Stat(bucket_, "a.txt");
  ASSERT_TRUE(info.ok()) << info.status().ToString();
  EXPECT_EQ(info->key, "a.txt");
  EXPECT_EQ(info->size, 5);
  int64_t now_ms = std::chrono::duration_cast<std::chrono::milliseconds>(
                       std::chrono::system_clock::now().time_since_epoch()).count();
  EXPECT_LE(std::abs(info->last_modified_ms - now_ms), 5 * 60 * 1000);
  auto data = store_->ReadAll(bucket_, "a.txt");
  ASSERT_TRUE(data.ok()) << data.status().ToString();
  EXPECT_EQ(*data, "hello");
}

TEST_P(ObjectStoreConformance, EmptyAndBinaryObjects) {
  Put("empty", "");
  std::string binary;
  for (int i = 0; i < 256; ++i) binary.push_back(static_cast<char>(i));
  Put("bin", binary);
  EXPECT_EQ(store_->Stat(bucket_, "empty")->size, 0);
  EXPECT_EQ(*store_->ReadAll(bucket_, "empty"), "");
  EXPECT_EQ(*store_->ReadAll(bucket_, "bin"), binary);
}

TEST_P(ObjectStoreConformance, RangedReads) {
  Put("r", "0123456789");
  EXPECT_EQ(*store_->Read(bucket_, "r", 0, 3), "012");
  EXPECT_EQ(*store_->Read(bucket_, "r", 4, 2), "45");
  EXPECT_EQ(*store_->Read(bucket_, "r", 7, 100), "789");  // past the end: what there is
  EXPECT_EQ(*store_->Read(bucket_, "r", 3, -1), "3456789");
  EXPECT_EQ(*store_->Read(bucket_, "r", 10, 5), "");       // offset == size
  EXPECT_EQ(*store_->Read(bucket_, "r", 2, 0), "");
  EXPECT_EQ(store_->Read(bucket_, "r", 11, 1).status().code(), StatusCode::kInvalidInput);
  EXPECT_EQ(store_->Read(bucket_, "r", -1, 1).status().code(), StatusCode::kInvalidInput);
}

TEST_P(ObjectStoreConformance, LargeObjectRoundTrips) {
  std::string big(3 << 20, '\0');
  SeededRandom random(7);
  random.Fill(big.data(), big.size());
  Put("big/blob", big);
  EXPECT_EQ(store_->Stat(bucket_, "big/blob")->size, static_cast<int64_t>(big.size()));
  EXPECT_EQ(*store_->Read(bucket_, "big/blob", 1 << 20, 10), big.substr(1 << 20, 10));
  EXPECT_TRUE(*store_->ReadAll(bucket_, "big/blob") == big);
}

TEST_P(ObjectStoreConformance, OverwriteReplacesTheWholeObject) {
  Put("o", std::string(1000, 'x'));
  Put("o", "short");
  EXPECT_EQ(*store_->ReadAll(bucket_, "o"), "short");
  EXPECT_EQ(store_->Stat(bucket_, "o")->size, 5);
}

TEST_P(ObjectStoreConformance, ConcurrentReadersSeeWholeObjectsOnly) {
  const std::string a(256 << 10, 'a');
  const std::string b(128 << 10, 'b');
  Put("atomic", a);
  std::atomic<bool> stop{false};
  std::atomic<int> torn{0};
  std::atomic<int> reads{0};
  std::thread reader([&] {
    while (!stop.load()) {
      auto data = store_->ReadAll(bucket_, "atomic");
      if (!data.ok()) {
        ++torn;  // the object never disappears while it is overwritten
        continue;
      }
      ++reads;
      if (*data != a && *data != b) ++torn;
    }
  });
  for (int i = 0; i < 20; ++i) ASSERT_TRUE(store_->Write(bucket_, "atomic", i % 2 ? a : b).ok());
  stop = true;
  reader.join();
  EXPECT_EQ(torn.load(), 0);
  EXPECT_GT(reads.load(), 0);
}

TEST_P(ObjectStoreConformance, DeleteRemovesAndIsIdempotent) {
  Put("d/x", "1");
  Put("d/y", "2");
  ASSERT_TRUE(store_->Delete(bucket_, "d/x").ok());
  EXPECT_TRUE(IsNotFound(store_->Stat(bucket_, "d/x").status()));
  EXPECT_TRUE(IsNotFound(store_->ReadAll(bucket_, "d/x").status()));
  EXPECT_EQ(*store_->ReadAll(bucket_, "d/y"), "2");
  EXPECT_TRUE(store_->Delete(bucket_, "d/x").ok());        // already gone
  EXPECT_TRUE(store_->Delete(bucket_, "never/was").ok());  // never there
  ASSERT_TRUE(store_->Delete(bucket_, "d/y").ok());
  std::vector<std::string> keys, prefixes;
  ListAll("", "/", 10, &keys, &prefixes);
  EXPECT_TRUE(keys.empty());
  EXPECT_TRUE(prefixes.empty());  // no folder left behind
}

TEST_P(ObjectStoreConformance, MissingObjectsAndBuckets) {
  EXPECT_TRUE(IsNotFound(store_->Stat(bucket_, "nope").status()));
  EXPECT_TRUE(IsNotFound(store_->Read(bucket_, "nope", 0, 1).status()));
  EXPECT_TRUE(IsNotFound(store_->Stat(bucket_, "no/such/folder/key").status()));
  std::string missing = bucket_ + "-missing";
  EXPECT_TRUE(IsNotFound(store_->Stat(missing, "k").status()));
  EXPECT_TRUE(IsNotFound(store_->Write(missing, "k", "x")));
  ListRequest request;
  request.bucket = missing;
  EXPECT_TRUE(IsNotFound(store_->List(request).status()));
  // A folder (a prefix other keys continue) is not an object.
  Put("dir/inner", "x");
  EXPECT_TRUE(IsNotFound(store_->Stat(bucket_, "dir").status()));
}

TEST_P(ObjectStoreConformance, InvalidBucketNamesAreRefused) {
  for (const char* bad : {"..", ".", "", "ab", "UPPER", "a_b", "-ab", "ab-", "a..b", "../x",
                          "127.0.0.1", "a/b"}) {
    EXPECT_EQ(store_->Stat(bad, "k").status().code(), StatusCode::kInvalidInput) << bad;
    EXPECT_EQ(store_->Write(bad, "k", "x").code(), StatusCode::kInvalidInput) << bad;
    EXPECT_EQ(store_->CreateBucket(bad).code(), StatusCode::kInvalidInput) << bad;
  }
}

TEST_P(ObjectStoreConformance, FlatListingIsInKeyOrder) {
  std::vector<std::string> written = {"b", "a/z", "a-c", "a/b/c", "ab", "a0", "c/d/e/f"};
  for (const std::string& k : written) Put(k, k);
  std::vector<std::string> keys, prefixes;
  ListAll("", "", 1000, &keys, &prefixes);
  std::vector<std::string> expected = written;
  std::sort(expected.begin(), expected.end());  // byte order: "a-c" < "a/b/c" < "a/z" < "a0"
  EXPECT_EQ(keys, expected);
  EXPECT_TRUE(prefixes.empty());
  ListRequest request;
  request.bucket = bucket_;
  auto page = store_->List(request);
  ASSERT_TRUE(page.ok());
  ASSERT_EQ(page->objects.size(), expected.size());
  EXPECT_EQ(page->objects[0].size, static_cast<int64_t>(expected[0].size()));
  EXPECT_GT(page->objects[0].last_modified_ms, 0);
}

TEST_P(ObjectStoreConformance, PrefixAndDelimiter) {
  for (const std::string k : {"logs/2024/01/a", "logs/2024/02/b", "logs/2025/c", "logs/top",
                              "logsx", "other/d"})
    Put(k, "x");
  std::vector<std::string> keys, prefixes;
  ListAll("", "/", 1000, &keys, &prefixes);
  EXPECT_EQ(keys, std::vector<std::string>({"logsx"}));
  EXPECT_EQ(prefixes, std::vector<std::string>({"logs/", "other/"}));
  keys.clear(), prefixes.clear();
  ListAll("logs/", "/", 1000, &keys, &prefixes);
  EXPECT_EQ(keys, std::vector<std::string>({"logs/top"}));
  EXPECT_EQ(prefixes, std::vector<std::string>({"logs/2024/", "logs/2025/"}));
  keys.clear(), prefixes.clear();
  ListAll("logs/2024", "", 1000, &keys, &prefixes);
  EXPECT_EQ(keys, std::vector<std::string>({"logs/2024/01/a", "logs/2024/02/b"}));
  keys.clear(), prefixes.clear();
  ListAll("logs", "/", 1000, &keys, &prefixes);  // a prefix that is not a folder
  EXPECT_EQ(keys, std::vector<std::string>({"logsx"}));
  EXPECT_EQ(prefixes, std::vector<std::string>({"logs/"}));
  keys.clear(), prefixes.clear();
  ListAll("logs/20", "/0", 1000, &keys, &prefixes);  // any delimiter, not only "/"
  EXPECT_EQ(prefixes, std::vector<std::string>({"logs/2024/0"}));
  EXPECT_EQ(keys, std::vector<std::string>({"logs/2025/c"}));
  keys.clear(), prefixes.clear();
  ListAll("nothing/", "/", 1000, &keys, &prefixes);
  EXPECT_TRUE(keys.empty() && prefixes.empty());
}

TEST_P(ObjectStoreConformance, PagingVisitsEveryEntryOnce) {
  std::vector<std::string> expected;
  for (int i = 0; i < 23; ++i) {
    std::string k = "p/" + std::string(1, static_cast<char>('a' + i % 5)) + "/" + std::to_string(i);
    Put(k, "v");
    expected.push_back(k);
  }
  Put("p/z", "v");
  expected.push_back("p/z");
  std::sort(expected.begin(), expected.end());
  for (int page : {1, 2, 7, 1000}) {
    std::vector<std::string> keys, prefixes;
    ListAll("p/", "", page, &keys, &prefixes);
    EXPECT_EQ(keys, expected) << "page size " << page;
    keys.clear(), prefixes.clear();
    ListAll("p/", "/", page, &keys, &prefixes);
    EXPECT_EQ(prefixes, std::vector<std::string>({"p/a/", "p/b/", "p/c/", "p/d/", "p/e/"}))
        << "page size " << page;
    EXPECT_EQ(keys, std::vector<std::string>({"p/z"})) << "page size " << page;
  }
  ListRequest request;
  request.bucket = bucket_;
  request.max_keys = 0;
  EXPECT_EQ(store_->List(request).status().code(), StatusCode::kInvalidInput);
  request.max_keys = 5;
  request.continuation = "not a token!";
  EXPECT_EQ(store_->List(request).status().code(), StatusCode::kInvalidInput);
}

TEST_P(ObjectStoreConformance, UnusualButValidKeys) {
  std::vector<std::string> odd = {"with space.csv", "ünïcödé/日本語.txt", "a..b", "...",
                                  ".hidden", "x/..y/z", "percent%2e%2e/q", "tab\there",
                                  "emoji-\xF0\x9F\x98\x80"};
  for (const std::string& k : odd) Put(k, "v:" + k);
  for (const std::string& k : odd) {
    auto data = store_->ReadAll(bucket_, k);
    ASSERT_TRUE(data.ok()) << k << ": " << data.status().ToString();
    EXPECT_EQ(*data, "v:" + k);
  }
  std::vector<std::string> keys, prefixes;
  ListAll("", "", 1000, &keys, &prefixes);
  std::vector<std::string> expected = odd;
  std::sort(expected.begin(), expected.end());
  EXPECT_EQ(keys, expected);
}

TEST_P(ObjectStoreConformance, InvalidKeysAreRefused) {
  std::string long_key(kMaxKeyBytes + 1, 'k');
  for (const std::string& bad : {std::string(), long_key, std::string("bad\xff"),
                                 std::string("nul\0byte", 8)}) {
    EXPECT_EQ(store_->Write(bucket_, bad, "x").code(), StatusCode::kInvalidInput);
    EXPECT_EQ(store_->Stat(bucket_, bad).status().code(), StatusCode::kInvalidInput);
  }
}

// Keys made of path syntax are keys, never path steps: whatever the store does with them, no
// other key (in this bucket or another) is read, written or deleted through them.
TEST_P(ObjectStoreConformance, DotSegmentsAreNeverPathSteps) {
  std::string other = bucket_ + "-other";
  ASSERT_TRUE(store_->CreateBucket(other).ok());
  ASSERT_TRUE(store_->Write(other, "secret", "other bucket").ok());
  Put("b", "original b");
  Put("a/c", "original a/c");
  std::vector<std::string> tricky = {"a/../b", "./b", "a/./c", "../" + other + "/secret",
                                     "/b", "a//c", "a/", "..", ".", "a/..", "../../../etc/passwd"};
  for (const std::string& k : tricky) {
    Status wrote = store_->Write(bucket_, k, "overwritten via " + k);
    if (GetParam().holds_dot_segments) {
      EXPECT_TRUE(wrote.ok()) << k << ": " << wrote.ToString();
      EXPECT_EQ(*store_->ReadAll(bucket_, k), "overwritten via " + k);
    } else {
      EXPECT_EQ(wrote.code(), StatusCode::kInvalidInput) << k;
      EXPECT_NE(wrote.message().find(k), std::string::npos) << wrote.message();
      EXPECT_EQ(store_->Stat(bucket_, k).status().code(), StatusCode::kInvalidInput) << k;
      EXPECT_EQ(store_->Read(bucket_, k, 0, -1).status().code(), StatusCode::kInvalidInput) << k;
      EXPECT_EQ(store_->Delete(bucket_, k).code(), StatusCode::kInvalidInput) << k;
    }
  }
  EXPECT_EQ(*store_->ReadAll(bucket_, "b"), "original b");
  EXPECT_EQ(*store_->ReadAll(bucket_, "a/c"), "original a/c");
  EXPECT_EQ(*store_->ReadAll(other, "secret"), "other bucket");
  if (GetParam().holds_dot_segments) {
    for (const std::string& k : tricky) EXPECT_TRUE(store_->Delete(bucket_, k).ok()) << k;
    EXPECT_EQ(*store_->ReadAll(bucket_, "b"), "original b");
    EXPECT_EQ(*store_->ReadAll(other, "secret"), "other bucket");
  }
  (void)store_->Delete(other, "secret");
}

}  // namespace openglue::storage
