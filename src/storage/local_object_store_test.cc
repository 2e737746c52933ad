#include "storage/local_object_store.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include <gtest/gtest.h>

#include "common/random.h"
#include "storage/location.h"
#include "storage/object_store_conformance.h"

namespace openglue::storage {
namespace {

namespace fs = std::filesystem;

// A fresh folder holding `store/` (the root) and `outside/` (what must never be reached).
class TempTree {
 public:
  TempTree() {
    SystemRandom random;
    base_ = fs::temp_directory_path() / ("og-storage-" + random.Hex(8));
    fs::create_directories(base_ / "store");
    fs::create_directories(base_ / "outside");
  }
  ~TempTree() {
    std::error_code ec;
    fs::remove_all(base_, ec);
  }
  std::string store() const { return (base_ / "store").string(); }
  std::string outside() const { return (base_ / "outside").string(); }

 private:
  fs::path base_;
};

// Each store made by a factory lives in its own folder, removed at exit.
std::vector<std::unique_ptr<TempTree>>& Trees() {
  static auto* trees = new std::vector<std::unique_ptr<TempTree>>();
  return *trees;
}

Result<std::unique_ptr<ObjectStore>> MakeLocal(bool use_openat2) {
  Trees().push_back(std::make_unique<TempTree>());
  OG_ASSIGN_OR_RETURN(auto store,
                      LocalObjectStore::Make({Trees().back()->store(), use_openat2}));
  return std::unique_ptr<ObjectStore>(std::move(store));
}

INSTANTIATE_TEST_SUITE_P(
    Local, ObjectStoreConformance,
    ::testing::Values(ObjectStoreFactory{"openat2", [] { return MakeLocal(true); }, false},
                      ObjectStoreFactory{"walk", [] { return MakeLocal(false); }, false}),
    ObjectStoreFactory::Name);

void WriteFile(const std::string& path, const std::string& text) {
  fs::create_directories(fs::path(path).parent_path());
  std::ofstream(path) << text;
}

// Local-only behaviour: links, special files, the files behind the keys.
class LocalStoreTest : public ::testing::TestWithParam<bool> {
 protected:
  void SetUp() override {
    auto made = LocalObjectStore::Make({tree_.store(), GetParam()});
    ASSERT_TRUE(made.ok()) << made.status().ToString();
    store_ = std::move(*made);
    ASSERT_TRUE(store_->CreateBucket("bkt").ok());
    WriteFile(tree_.outside() + "/secret.txt", "outside secret");
  }
  TempTree tree_;
  std::unique_ptr<LocalObjectStore> store_;
};

INSTANTIATE_TEST_SUITE_P(Resolution, LocalStoreTest, ::testing::Values(true, false),
                         [](const auto& info) { return info.param ? "openat2" : "walk"; });

TEST_P(LocalStoreTest, KeysAreFilesUnderTheBucket) {
  ASSERT_TRUE(store_->Write("bkt", "a/b/c.csv", "1,2\n").ok());
  std::ifstream in(tree_.store() + "/bkt/a/b/c.csv");
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  EXPECT_EQ(text, "1,2\n");
  // A file dropped in by hand is an object.
  WriteFile(tree_.store() + "/bkt/by-hand.txt", "hand");
  EXPECT_EQ(*store_->ReadAll("bkt", "by-hand.txt"), "hand");
  EXPECT_EQ(*store_->PathFor("bkt", "a/b/c.csv"), tree_.store() + "/bkt/a/b/c.csv");
  EXPECT_EQ(store_->PathFor("bkt", "a/../../x").status().code(), StatusCode::kInvalidInput);
  EXPECT_EQ(store_->PathFor("..", "x").status().code(), StatusCode::kInvalidInput);
}

TEST_P(LocalStoreTest, SymlinkToOutsideIsNeverFollowed) {
  ASSERT_EQ(::symlink((tree_.outside() + "/secret.txt").c_str(),
                      (tree_.store() + "/bkt/link.txt").c_str()), 0);
  ASSERT_EQ(::symlink(tree_.outside().c_str(), (tree_.store() + "/bkt/dirlink").c_str()), 0);
  for (const char* key : {"link.txt", "dirlink/secret.txt"}) {
    auto read = store_->ReadAll("bkt", key);
    ASSERT_FALSE(read.ok()) << key;
    EXPECT_EQ(read.status().code(), StatusCode::kInvalidInput) << key;
    EXPECT_NE(read.status().message().find(key), std::string::npos);
    EXPECT_NE(read.status().message().find("symbolic link"), std::string::npos);
    EXPECT_EQ(store_->Stat("bkt", key).status().code(), StatusCode::kInvalidInput);
  }
  // Writing through the folder link is refused; writing over the file link replaces the link
  // itself, never the file it points at.
  EXPECT_EQ(store_->Write("bkt", "dirlink/secret.txt", "pwned").code(), StatusCode::kInvalidInput);
  EXPECT_EQ(store_->Write("bkt", "dirlink/new.txt", "pwned").code(), StatusCode::kInvalidInput);
  EXPECT_EQ(store_->Delete("bkt", "dirlink/secret.txt").code(), StatusCode::kInvalidInput);
  EXPECT_EQ(store_->Delete("bkt", "link.txt").code(), StatusCode::kInvalidInput);
  ASSERT_TRUE(store_->Write("bkt", "link.txt", "replaced").ok());
  EXPECT_EQ(*store_->ReadAll("bkt", "link.txt"), "replaced");
  std::ifstream in(tree_.outside() + "/secret.txt");
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  EXPECT_EQ(text, "outside secret");
  EXPECT_FALSE(fs::exists(tree_.outside() + "/new.txt"));
  // Listing skips links.
  ListRequest request;
  request.bucket = "bkt";
  auto list = store_->List(request);
  ASSERT_TRUE(list.ok());
  ASSERT_EQ(list->objects.size(), 1u);
  EXPECT_EQ(list->objects[0].key, "link.txt");  // now a regular file
  EXPECT_TRUE(list->common_prefixes.empty());
}

TEST_P(LocalStoreTest, BucketThatIsASymlinkIsRefused) {
  ASSERT_EQ(::symlink(tree_.outside().c_str(), (tree_.store() + "/evil-bucket").c_str()), 0);
  auto read = store_->ReadAll("evil-bucket", "secret.txt");
  EXPECT_EQ(read.status().code(), StatusCode::kInvalidInput);
  EXPECT_NE(read.status().message().find("evil-bucket"), std::string::npos);
  EXPECT_EQ(store_->Write("evil-bucket", "x", "pwned").code(), StatusCode::kInvalidInput);
  ListRequest request;
  request.bucket = "evil-bucket";
  EXPECT_EQ(store_->List(request).status().code(), StatusCode::kInvalidInput);
  EXPECT_EQ(store_->CreateBucket("evil-bucket").code(), StatusCode::kInvalidInput);
  EXPECT_FALSE(fs::exists(tree_.outside() + "/x"));
}

TEST_P(LocalStoreTest, FifoIsNotAnObjectAndDoesNotBlock) {
  ASSERT_EQ(::mkfifo((tree_.store() + "/bkt/pipe").c_str(), 0644), 0);
  EXPECT_EQ(store_->ReadAll("bkt", "pipe").status().code(), StatusCode::kInvalidInput);
  ListRequest request;
  request.bucket = "bkt";
  EXPECT_TRUE(store_->List(request)->objects.empty());
}

TEST_P(LocalStoreTest, TemporaryFilesAreHiddenAndReserved) {
  WriteFile(tree_.store() + "/bkt/.og-tmp.abandoned", "half");
  ListRequest request;
  request.bucket = "bkt";
  EXPECT_TRUE(store_->List(request)->objects.empty());
  EXPECT_EQ(store_->Write("bkt", ".og-tmp.x", "y").code(), StatusCode::kInvalidInput);
  ASSERT_TRUE(store_->Write("bkt", "k", "v").ok());
  int files = 0;
  for (const auto& e : fs::directory_iterator(tree_.store() + "/bkt")) files += e.is_regular_file();
  EXPECT_EQ(files, 2);  // k and the abandoned temp file: a write leaves no temp file behind
}

// versitygw (the S3 API over this folder) keeps multipart parts in progress in
// <bucket>/.sgwtmp/: they are not objects here either. Deeper ".sgwtmp" folders are keys.
TEST_P(LocalStoreTest, GatewayPartsInProgressAreNotListed) {
  WriteFile(tree_.store() + "/bkt/.sgwtmp/multipart/abc/1", "part");
  WriteFile(tree_.store() + "/bkt/a/.sgwtmp/kept", "key");
  ListRequest request;
  request.bucket = "bkt";
  auto listed = store_->List(request);
  ASSERT_TRUE(listed.ok()) << listed.status().ToString();
  ASSERT_EQ(listed->objects.size(), 1u);
  EXPECT_EQ(listed->objects[0].key, "a/.sgwtmp/kept");
}

TEST_P(LocalStoreTest, DeleteRemovesEmptyFoldersOnly) {
  ASSERT_TRUE(store_->Write("bkt", "x/y/z/1", "1").ok());
  ASSERT_TRUE(store_->Write("bkt", "x/2", "2").ok());
  ASSERT_TRUE(store_->Delete("bkt", "x/y/z/1").ok());
  EXPECT_FALSE(fs::exists(tree_.store() + "/bkt/x/y"));
  EXPECT_TRUE(fs::exists(tree_.store() + "/bkt/x/2"));
  EXPECT_TRUE(fs::exists(tree_.store() + "/bkt"));
}

TEST_P(LocalStoreTest, FileAndFolderConflictsAreInvalidInput) {
  ASSERT_TRUE(store_->Write("bkt", "f", "file").ok());
  EXPECT_EQ(store_->Write("bkt", "f/under", "x").code(), StatusCode::kInvalidInput);
  ASSERT_TRUE(store_->Write("bkt", "d/under", "x").ok());
  EXPECT_EQ(store_->Write("bkt", "d", "x").code(), StatusCode::kInvalidInput);
  EXPECT_EQ(*store_->ReadAll("bkt", "d/under"), "x");
}

TEST_P(LocalStoreTest, MissingRootMeansMissingBucket) {
  fs::remove_all(tree_.store());
  EXPECT_EQ(store_->Stat("bkt", "k").status().code(), StatusCode::kEntityNotFound);
}

TEST(LocationTest, Schemes) {
  auto s3 = ParseLocation("s3://bucket/a/b.py");
  ASSERT_TRUE(s3.ok());
  EXPECT_EQ(s3->scheme, LocationScheme::kObject);
  EXPECT_EQ(s3->bucket, "bucket");
  EXPECT_EQ(s3->key, "a/b.py");
  for (const char* uri : {"s3a://bucket/a/b.py", "s3n://bucket/a/b.py", "S3://bucket/a/b.py"}) {
    auto other = ParseLocation(uri);
    ASSERT_TRUE(other.ok()) << uri;
    EXPECT_EQ(other->bucket, "bucket");
    EXPECT_EQ(other->key, "a/b.py");
  }
  EXPECT_EQ(ParseLocation("s3://bucket")->key, "");
  EXPECT_EQ(ParseLocation("s3://bucket/")->key, "");
  EXPECT_EQ(ParseLocation("s3://bucket/pre/fix/")->key, "pre/fix/");
  auto file = ParseLocation("file:///tmp/x.py");
  ASSERT_TRUE(file.ok());
  EXPECT_EQ(file->scheme, LocationScheme::kLocalFile);
  EXPECT_EQ(file->path, "/tmp/x.py");
  EXPECT_EQ(ParseLocation("file://localhost/tmp/x.py")->path, "/tmp/x.py");
  EXPECT_EQ(ParseLocation("/tmp/x.py")->path, "/tmp/x.py");
  EXPECT_EQ(ParseLocation("rel/x.py")->path, "rel/x.py");
}

TEST(LocationTest, KeysAreKeptAsWritten) {
  // No decoding and no collapsing: whether a key can be held is the store's decision.
  EXPECT_EQ(ParseLocation("s3://bucket/a/../../b")->key, "a/../../b");
  EXPECT_EQ(ParseLocation("s3://bucket//etc/passwd")->key, "/etc/passwd");
  EXPECT_EQ(ParseLocation("s3://bucket/%2e%2e/x")->key, "%2e%2e/x");
}

TEST(LocationTest, RefusedLocationsNameThemselves) {
  for (const std::string& uri : std::vector<std::string>{
           "s3://../../outside/evil.py", "s3://./x", "s3:///etc/passwd", "s3://Bad_Bucket/x",
           "s3://%2e%2e/x", "s3://a/x", "file://evil.example.com/etc/passwd",
           "http://example.com/x.py", "hdfs://nn/x", "s3://bucket/" + std::string(1025, 'k')}) {
    auto parsed = ParseLocation(uri);
    ASSERT_FALSE(parsed.ok()) << uri;
    EXPECT_EQ(parsed.status().code(), StatusCode::kInvalidInput) << uri;
    EXPECT_NE(parsed.status().message().find(uri.substr(0, 40)), std::string::npos)
        << parsed.status().message();
  }
  EXPECT_FALSE(ParseLocation("").ok());
  EXPECT_FALSE(ParseLocation(std::string("s3://bucket/a\0b", 15)).ok());
  EXPECT_FALSE(ParseLocation("s3://bucket/\xff").ok());
}

}  // namespace
}  // namespace openglue::storage
