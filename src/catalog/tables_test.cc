// GetTableResponse: the serialized GetTable body, served from SerializedResponseCache, is
// byte for byte what serializing GetTable's document gives, before and after the table
// changes, and its errors are GetTable's.
#include <gtest/gtest.h>

#include <filesystem>

#include "catalog/catalog.h"
#include "store/sqlite_store.h"

namespace openglue::catalog {
namespace {

class GetTableResponseTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char pattern[] = "/tmp/og-tables-XXXXXX";
    dir_ = mkdtemp(pattern);
    auto store = store::SqliteStore::Make(dir_ + "/catalog.db");
    ASSERT_TRUE(store.ok());
    store_ = std::move(*store);
    auto catalog = Catalog::Make(store_.get(), &clock_, CatalogOptions{});
    ASSERT_TRUE(catalog.ok());
    catalog_ = std::move(*catalog);
    ASSERT_TRUE(catalog_->CreateDatabase({{"DatabaseInput", {{"Name", "db"}}}}).ok());
  }
  void TearDown() override {
    catalog_.reset();
    store_.reset();
    std::filesystem::remove_all(dir_);
  }
  // The body the generic path would send: the handler's document, serialized.
  std::string Serialized(const Json& request) {
    Result<Json> table = catalog_->GetTable(request);
    EXPECT_TRUE(table.ok()) << table.status().ToString();
    return table.ok() ? DumpJson(*table) : "";
  }

  std::string dir_;
  FakeClock clock_{1700000000123};
  std::unique_ptr<store::SqliteStore> store_;
  std::unique_ptr<Catalog> catalog_;
};

TEST_F(GetTableResponseTest, SameBytesAsSerializingGetTableBeforeAndAfterAnUpdate) {
  Json input = {{"Name", "Events"},
                {"Description", "caf\xC3\xA9 \"quoted\" \\ \t tab"},
                {"Retention", 7},
                {"Parameters", {{"ratio", "0.1"}, {"classification", "parquet"}}},
                {"StorageDescriptor",
                 {{"Columns", {{{"Name", "id"}, {"Type", "bigint"}}}},
                  {"Location", "s3://b/events/"},
                  {"NumberOfBuckets", -1}}}};
  ASSERT_TRUE(catalog_->CreateTable({{"DatabaseName", "db"}, {"TableInput", input}}).ok());
  Json request = {{"DatabaseName", "DB"}, {"Name", "events"}};
  std::string expected = Serialized(request);
  ASSERT_NE(expected.find("\"Table\""), std::string::npos);
  for (int i = 0; i < 3; ++i) {  // the first fills the cache, the others are served from it
    Result<std::string> body = catalog_->GetTableResponse(request);
    ASSERT_TRUE(body.ok()) << body.status().ToString();
    EXPECT_EQ(*body, expected);
  }

  // A changed table is a changed document: the cached body is not served again.
  clock_.Advance(1500);
  input["Description"] = "second";
  ASSERT_TRUE(catalog_->UpdateTable({{"DatabaseName", "db"}, {"TableInput", input}}).ok());
  std::string updated = Serialized(request);
  ASSERT_NE(updated, expected);
  Result<std::string> body = catalog_->GetTableResponse(request);
  ASSERT_TRUE(body.ok());
  EXPECT_EQ(*body, updated);
  EXPECT_NE(body->find("second"), std::string::npos);
}

TEST_F(GetTableResponseTest, ErrorsAreGetTables) {
  for (Json request : {Json{{"DatabaseName", "db"}, {"Name", "missing"}},
                       Json{{"DatabaseName", "nodb"}, {"Name", "t"}}}) {
    Result<Json> generic = catalog_->GetTable(request);
    Result<std::string> serialized = catalog_->GetTableResponse(request);
    ASSERT_FALSE(generic.ok());
    ASSERT_FALSE(serialized.ok());
    EXPECT_EQ(serialized.status().code(), generic.status().code());
    EXPECT_EQ(serialized.status().message(), generic.status().message());
  }
  // A table deleted after it was served is not found, not served from the cache.
  ASSERT_TRUE(catalog_->CreateTable({{"DatabaseName", "db"}, {"TableInput", {{"Name", "t"}}}}).ok());
  ASSERT_TRUE(catalog_->GetTableResponse({{"DatabaseName", "db"}, {"Name", "t"}}).ok());
  ASSERT_TRUE(catalog_->DeleteTable({{"DatabaseName", "db"}, {"Name", "t"}}).ok());
  Result<std::string> gone = catalog_->GetTableResponse({{"DatabaseName", "db"}, {"Name", "t"}});
  EXPECT_EQ(gone.status().code(), StatusCode::kEntityNotFound);
}

TEST(SerializedResponseCache, HitsOnlyForTheSameDocumentAndStaysBounded) {
  SerializedResponseCache cache;
  EXPECT_FALSE(cache.Find("k", "doc"));
  cache.Put("k", "doc", "body");
  EXPECT_EQ(cache.Find("k", "doc"), std::optional<std::string>("body"));
  EXPECT_FALSE(cache.Find("k", "doc2"));
  EXPECT_FALSE(cache.Find("other", "doc"));
  cache.Put("k", "doc2", "body2");  // replaces
  EXPECT_FALSE(cache.Find("k", "doc"));
  EXPECT_EQ(cache.Find("k", "doc2"), std::optional<std::string>("body2"));

  // An entry over the per-entry bound is not kept.
  std::string big(SerializedResponseCache::kMaxEntryBytes, 'x');
  cache.Put("big", big, "b");
  EXPECT_FALSE(cache.Find("big", big));
  // Filling past the total bound clears it, and the newest entry is kept.
  std::string doc(SerializedResponseCache::kMaxEntryBytes / 2, 'd');
  size_t n = SerializedResponseCache::kMaxBytes / doc.size() + 2;
  for (size_t i = 0; i < n; ++i) cache.Put("key" + std::to_string(i), doc, "body");
  EXPECT_TRUE(cache.Find("key" + std::to_string(n - 1), doc));
  EXPECT_FALSE(cache.Find("key0", doc));
}

}  // namespace
}  // namespace openglue::catalog
