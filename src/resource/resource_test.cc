#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>

#include "resource/arn.h"
#include "resource/batch.h"
#include "resource/paging.h"
#include "resource/request.h"
#include "resource/tags.h"
#include "store/sqlite_store.h"

namespace openglue::resource {
namespace {

// Passes everything through to a real transaction and counts the rows its scans return.
class CountingTransaction : public store::Transaction {
 public:
  explicit CountingTransaction(std::unique_ptr<store::Transaction> inner) : inner_(std::move(inner)) {}
  Result<std::optional<std::string>> Get(std::string_view kind, std::string_view key) override {
    return inner_->Get(kind, key);
  }
  Status Put(std::string_view kind, std::string_view key, std::string_view doc) override {
    return inner_->Put(kind, key, doc);
  }
  Status Insert(std::string_view kind, std::string_view key, std::string_view doc) override {
    return inner_->Insert(kind, key, doc);
  }
  Result<bool> Delete(std::string_view kind, std::string_view key) override {
    return inner_->Delete(kind, key);
  }
  Result<int64_t> DeletePrefix(std::string_view kind, std::string_view prefix) override {
    return inner_->DeletePrefix(kind, prefix);
  }
  Result<std::vector<store::Row>> Scan(std::string_view kind, const store::ScanOptions& options) override {
    auto rows = inner_->Scan(kind, options);
    if (rows.ok()) rows_read += static_cast<int64_t>(rows->size());
    return rows;
  }
  Result<int64_t> Count(std::string_view kind, std::string_view prefix) override {
    return inner_->Count(kind, prefix);
  }
  Status Commit() override { return inner_->Commit(); }
  int64_t rows_read = 0;

 private:
  std::unique_ptr<store::Transaction> inner_;
};

class ResourceTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char pattern[] = "/tmp/og-resource-XXXXXX";
    dir_ = mkdtemp(pattern);
    auto made = store::SqliteStore::Make(dir_ + "/catalog.db");
    ASSERT_TRUE(made.ok()) << made.status().ToString();
    store_ = std::move(*made);
  }
  void TearDown() override {
    store_.reset();
    std::filesystem::remove_all(dir_);
  }
  void Fill(int n) {
    auto txn = store_->BeginWrite();
    ASSERT_TRUE(txn.ok());
    for (int i = 0; i < n; ++i) {
      char key[16];
      std::snprintf(key, sizeof(key), "k%05d", i);
      ASSERT_TRUE((*txn)->Put("item", key, std::to_string(i)).ok());
    }
    ASSERT_TRUE((*txn)->Commit().ok());
  }
  std::unique_ptr<CountingTransaction> Read() {
    auto txn = store_->BeginRead();
    EXPECT_TRUE(txn.ok());
    return std::make_unique<CountingTransaction>(std::move(*txn));
  }

  std::string dir_;
  std::unique_ptr<store::SqliteStore> store_;
};

TEST(RequestTest, GettersFallBackOnAbsentNullOrWrongType) {
  Json request = ParseJson(R"({"Name": "x", "Null": null, "Max": 7, "Flag": true, "Obj": {"a": "b"}})");
  EXPECT_EQ(GetString(request, "Name"), "x");
  EXPECT_EQ(GetString(request, "Null", "fb"), "fb");
  EXPECT_EQ(GetString(request, "Max", "fb"), "fb");
  EXPECT_EQ(GetInt(request, "Max", 1), 7);
  EXPECT_EQ(GetInt(request, "Name", 1), 1);
  EXPECT_TRUE(GetBool(request, "Flag", false));
  EXPECT_FALSE(GetBool(request, "Absent", false));
  EXPECT_EQ(GetObject(request, "Obj"), ParseJson(R"({"a": "b"})"));
  EXPECT_EQ(GetObject(request, "Name"), Json::object());
  EXPECT_EQ(GetString(Json::array(), "Name", "fb"), "fb");
}

TEST(ArnTest, ParsesAndFormats) {
  auto arn = Arn::Parse("arn:aws:glue:eu-west-1:123456789012:table/db/t");
  ASSERT_TRUE(arn.ok());
  EXPECT_EQ(arn->region, "eu-west-1");
  EXPECT_EQ(arn->account_id, "123456789012");
  EXPECT_EQ(arn->type(), "table");
  EXPECT_EQ(arn->resource, (std::vector<std::string>{"table", "db", "t"}));
  EXPECT_EQ(arn->ToString(), "arn:aws:glue:eu-west-1:123456789012:table/db/t");
  EXPECT_EQ(GlueArn("us-east-1", "1", {"job", "j"}), "arn:aws:glue:us-east-1:1:job/j");
}

TEST(ArnTest, RefusesMalformed) {
  for (const char* bad : {"", "arn", "arn:aws:s3:us-east-1:1:bucket", "arn:aws:glue:us-east-1::database/d",
                          "arn:aws:glue:us-east-1:1:", "arn:aws:glue:us-east-1:1:database/d:x",
                          "nra:aws:glue:us-east-1:1:database/d", "arn:aws:glue:us-east-1:1:/d"}) {
    auto arn = Arn::Parse(bad);
    EXPECT_FALSE(arn.ok()) << bad;
    if (!arn.ok()) {
      EXPECT_EQ(arn.status().code(), StatusCode::kInvalidInput) << bad;
    }
  }
}

TEST(BatchTest, InternalFailsTheCallOtherFailuresAreReportedPerItem) {
  Json errors = Json::array();
  EXPECT_TRUE(RecordItemError(Status::OK(), {{"Name", "a"}}, &errors).ok());
  EXPECT_TRUE(errors.empty());
  EXPECT_TRUE(RecordItemError(Status::EntityNotFound("gone"), {{"Name", "b"}}, &errors).ok());
  EXPECT_TRUE(RecordItemError(Status::InvalidInput("bad"), {{"Name", "c"}}, &errors, "Error").ok());
  Status internal = RecordItemError(Status::Internal("disk"), {{"Name", "d"}}, &errors);
  EXPECT_EQ(internal.code(), StatusCode::kInternal);
  ASSERT_EQ(errors.size(), 2u);
  EXPECT_EQ(errors[0], ParseJson(R"({"Name": "b", "ErrorDetail": {"ErrorCode": "EntityNotFoundException", "ErrorMessage": "gone"}})"));
  EXPECT_EQ(errors[1]["Error"]["ErrorCode"], "InvalidInputException");
  // Without an error list a failed item is dropped, but Internal still fails the call.
  EXPECT_TRUE(RecordItemError(Status::InvalidInput("bad"), Json(), nullptr).ok());
  EXPECT_FALSE(RecordItemError(Status::Internal("disk"), Json(), nullptr).ok());
}

TEST_F(ResourceTest, ScanPageWalksEveryRowOnceAndReadsOnlyLimitPlusOne) {
  Fill(50);
  Json request = Json::object();
  std::vector<std::string> seen;
  int pages = 0;
  while (true) {
    auto txn = Read();
    auto page = ScanPage(txn.get(), "item", "", request, 7);
    ASSERT_TRUE(page.ok()) << page.status().ToString();
    // Without a filter a page reads what it returns plus one row to decide on a token.
    EXPECT_LE(txn->rows_read, 8);
    for (const auto& row : page->rows) seen.push_back(row.key);
    ++pages;
    if (page->next_token.empty()) break;
    request["NextToken"] = page->next_token;
  }
  EXPECT_EQ(pages, 8);
  ASSERT_EQ(seen.size(), 50u);
  for (size_t i = 1; i < seen.size(); ++i) EXPECT_LT(seen[i - 1], seen[i]);
}

TEST_F(ResourceTest, ScanPageNoTokenWhenPageEndsExactlyAtTheLastMatch) {
  Fill(10);
  auto txn = Read();
  auto page = ScanPage(txn.get(), "item", "", Json::object(), 10);
  ASSERT_TRUE(page.ok());
  EXPECT_EQ(page->rows.size(), 10u);
  EXPECT_TRUE(page->next_token.empty());
  // Filtered: only even values, 5 of them; a page of 5 has no token.
  auto even = [](const store::Row& row) -> Result<bool> { return std::stoi(row.doc) % 2 == 0; };
  page = ScanPage(txn.get(), "item", "", Json::object(), 5, even);
  ASSERT_TRUE(page.ok());
  EXPECT_EQ(page->rows.size(), 5u);
  EXPECT_TRUE(page->next_token.empty());
  page = ScanPage(txn.get(), "item", "", Json::object(), 4, even);
  ASSERT_TRUE(page.ok());
  EXPECT_FALSE(page->next_token.empty());
}

TEST_F(ResourceTest, ScanPageRefusesForeignTokens) {
  Fill(3);
  auto txn = Read();
  Json request{{"NextToken", EncodeToken("other\x1fkey")}};
  auto page = ScanPage(txn.get(), "item", "k", request, 10);
  ASSERT_FALSE(page.ok());
  EXPECT_EQ(page.status().code(), StatusCode::kInvalidInput);
  request["NextToken"] = "!!not base64!!";
  page = ScanPage(txn.get(), "item", "", request, 10);
  EXPECT_EQ(page.status().code(), StatusCode::kInvalidInput);
  EXPECT_EQ(PageSize(Json{{"MaxResults", 0}}, 100), 100);
  EXPECT_EQ(PageSize(Json{{"MaxResults", 5}}, 100), 5);
}

TEST_F(ResourceTest, TagServiceResolvesRegisteredTypesAndKeepsOneStore) {
  TagService tags(store_.get(), "us-east-1");
  tags.Register(
      "thing",
      [](store::Transaction* txn, const Arn& arn) -> Status {
        if (arn.resource.size() == 2 && arn.resource[1] == "box") return Status::OK();
        return Status::EntityNotFound("Thing not found.");
      },
      NameCase::kFolded);
  const std::string arn = "arn:aws:glue:eu-west-1:42:thing/BOX";
  auto added = tags.TagResource(Json{{"ResourceArn", arn}, {"TagsToAdd", {{"a", "1"}, {"b", "2"}}}});
  ASSERT_TRUE(added.ok()) << added.status().ToString();
  auto got = tags.GetTags(Json{{"ResourceArn", "arn:aws:glue:us-east-1:42:thing/box"}});
  ASSERT_TRUE(got.ok());
  EXPECT_EQ((*got)["Tags"], ParseJson(R"({"a": "1", "b": "2"})"));
  ASSERT_TRUE(tags.UntagResource(Json{{"ResourceArn", arn}, {"TagsToRemove", {"a", "zz"}}}).ok());
  got = tags.GetTags(Json{{"ResourceArn", arn}});
  EXPECT_EQ((*got)["Tags"], ParseJson(R"({"b": "2"})"));

  EXPECT_EQ(tags.GetTags(Json{{"ResourceArn", "arn:aws:glue:us-east-1:42:thing/other"}}).status().code(),
            StatusCode::kEntityNotFound);
  EXPECT_EQ(tags.GetTags(Json{{"ResourceArn", "arn:aws:glue:us-east-1:42:crawler/c"}}).status().code(),
            StatusCode::kEntityNotFound);
  EXPECT_EQ(tags.GetTags(Json{{"ResourceArn", "not-an-arn"}}).status().code(), StatusCode::kInvalidInput);

  Json many = Json::object();
  for (int i = 0; i < 50; ++i) many["k" + std::to_string(i)] = "v";
  EXPECT_EQ(tags.TagResource(Json{{"ResourceArn", arn}, {"TagsToAdd", many}}).status().code(),
            StatusCode::kInvalidInput);  // 51 with "b"
}

TEST_F(ResourceTest, TagHelpersMoveAndDelete) {
  auto txn = store_->BeginWrite();
  ASSERT_TRUE(txn.ok());
  ASSERT_TRUE(AddTags(txn->get(), "arn:x/a", Json{{"k", "v"}}).ok());
  ASSERT_TRUE(AddTags(txn->get(), "arn:x/b", Json{{"k", "w"}}).ok());
  EXPECT_FALSE(AddTags(txn->get(), "arn:x/a", Json::array()).ok());
  ASSERT_TRUE(MoveTags(txn->get(), "arn:x/a", "arn:y/a").ok());
  EXPECT_EQ(*LoadTags(txn->get(), "arn:x/a"), Json::object());
  EXPECT_EQ(*LoadTags(txn->get(), "arn:y/a"), Json({{"k", "v"}}));
  ASSERT_TRUE(DeleteTagsWithPrefix(txn->get(), "arn:x/").ok());
  EXPECT_EQ(*LoadTags(txn->get(), "arn:x/b"), Json::object());
  ASSERT_TRUE(DeleteTags(txn->get(), "arn:y/a").ok());
  EXPECT_EQ(*LoadTags(txn->get(), "arn:y/a"), Json::object());
}

}  // namespace
}  // namespace openglue::resource
