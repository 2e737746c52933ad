#include "storage/arrow_fs.h"

#include <unistd.h>

#include <filesystem>
#include <fstream>

#include <arrow/filesystem/filesystem.h>
#include <gtest/gtest.h>

namespace openglue::storage {
namespace {

namespace fs = std::filesystem;

// The AWS SDK inside pyarrow's libarrow_s3 is not instrumented: its threads and its teardown give
// sanitizer reports that are not ours (as with the engine label under TSan).
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
constexpr bool kSanitized = true;
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer)
constexpr bool kSanitized = true;
#else
constexpr bool kSanitized = false;
#endif
#else
constexpr bool kSanitized = false;
#endif

class ArrowFsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char pattern[] = "/tmp/og-arrowfs-XXXXXX";
    ASSERT_NE(mkdtemp(pattern), nullptr);
    dir_ = pattern;
    root_ = dir_ + "/s3";
    fs::create_directories(root_ + "/bkt/in");
    fs::create_directories(dir_ + "/outside");
    options_.s3_root = root_;
  }
  void TearDown() override { fs::remove_all(dir_); }
  std::string dir_, root_;
  StorageOptions options_;
};

TEST_F(ArrowFsTest, EmbeddedStoreMapsBucketAndKeyUnderTheRoot) {
  auto r = ResolveArrowPath("s3://bkt/in/data.csv", options_);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->path, "bkt/in/data.csv");
  EXPECT_EQ(r->uri, "s3://bkt/in/data.csv");
  EXPECT_FALSE(r->is_object_store);
  auto out = r->fs->OpenOutputStream(r->path);
  ASSERT_TRUE(out.ok());
  ASSERT_TRUE((*out)->Write("x", 1).ok());
  ASSERT_TRUE((*out)->Close().ok());
  EXPECT_TRUE(fs::exists(root_ + "/bkt/in/data.csv"));
  // One trailing '/' names the same prefix; s3a:// is the same store.
  auto prefix = ResolveArrowPath("s3a://bkt/in/", options_);
  ASSERT_TRUE(prefix.ok());
  EXPECT_EQ(prefix->path, "bkt/in");
  EXPECT_EQ(ChildPath(*prefix, "k=v/f").uri, "s3://bkt/in/k=v/f");
}

TEST_F(ArrowFsTest, EscapingKeysAreRefused) {
  for (const char* uri : {"s3://bkt/../outside/x", "s3://bkt/in/../../x", "s3://bkt/./x", "s3://bkt//etc/passwd",
                          "s3://bkt/a//b", "s3://../x", "s3://bkt/in/.."}) {
    auto r = ResolveArrowPath(uri, options_);
    ASSERT_FALSE(r.ok()) << uri;
    EXPECT_EQ(r.status().code(), StatusCode::kInvalidInput) << uri;
    EXPECT_NE(r.status().message().find("s3://"), std::string::npos) << r.status().message();
  }
}

TEST_F(ArrowFsTest, SymlinkLeadingOutsideIsRefusedInsideIsAllowed) {
  fs::create_symlink(dir_ + "/outside", root_ + "/bkt/escape");
  auto r = ResolveArrowPath("s3://bkt/escape/new/file.parquet", options_);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("symbolic link"), std::string::npos);
  fs::create_symlink(dir_ + "/outside", root_ + "/linkbucket");
  EXPECT_FALSE(ResolveArrowPath("s3://linkbucket/x", options_).ok());
  fs::create_symlink(root_ + "/bkt/in", root_ + "/bkt/alias");
  EXPECT_TRUE(ResolveArrowPath("s3://bkt/alias/x", options_).ok());
  // A link as the final component that leads out.
  std::ofstream(dir_ + "/outside/secret") << "s";
  fs::create_symlink(dir_ + "/outside/secret", root_ + "/bkt/in/secret");
  EXPECT_FALSE(ResolveArrowPath("s3://bkt/in/secret", options_).ok());
}

TEST_F(ArrowFsTest, LocalPathsAndErrors) {
  auto plain = ResolveArrowPath(dir_ + "/outside/", options_);
  ASSERT_TRUE(plain.ok());
  EXPECT_EQ(plain->path, dir_ + "/outside");
  EXPECT_EQ(plain->uri, dir_ + "/outside");
  auto file = ResolveArrowPath("file://" + dir_ + "/x", options_);
  ASSERT_TRUE(file.ok());
  EXPECT_EQ(file->path, dir_ + "/x");
  EXPECT_EQ(file->uri, "file://" + dir_ + "/x");
  EXPECT_FALSE(ResolveArrowPath("s3://bkt/x", StorageOptions{}).ok());
  StorageOptions missing;
  missing.s3_root = dir_ + "/nope";
  EXPECT_FALSE(ResolveArrowPath("s3://bkt/x", missing).ok());
  EXPECT_FALSE(ResolveArrowPath("gs://bkt/x", options_).ok());
  StorageOptions bad;
  bad.endpoint = "ftp://host";
  EXPECT_FALSE(ResolveArrowPath("s3://bkt/x", bad).ok());
}

TEST_F(ArrowFsTest, EndpointGivesArrowS3FileSystem) {
  if (kSanitized) GTEST_SKIP() << "the AWS SDK is not instrumented";
  auto options = StorageOptions::FromMap({{"endpoint", "http://127.0.0.1:1"}, {"access_key", "a"},
                                          {"secret_key", "b"}, {"region", "eu-west-1"}, {"other", "x"}});
  EXPECT_EQ(options.region, "eu-west-1");
  auto r = ResolveArrowPath("s3://bkt/a/b/", options);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_TRUE(r->is_object_store);
  EXPECT_EQ(r->path, "bkt/a/b");
  EXPECT_EQ(r->uri, "s3://bkt/a/b");
  EXPECT_EQ(r->fs->type_name(), "s3");
  r = ResolvedPath{};  // the filesystem goes before S3 is shut down
  FinalizeArrowS3();
  FinalizeArrowS3();  // idempotent
  auto after = ResolveArrowPath("s3://bkt/a", options);
  ASSERT_FALSE(after.ok());
  EXPECT_EQ(after.status().code(), StatusCode::kInternal);
}

}  // namespace
}  // namespace openglue::storage
