#include "jobs/module_environments.h"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <ctime>
#include <filesystem>
#include <fstream>
#include <string>

#include <gtest/gtest.h>

namespace openglue::jobs {
namespace {

namespace fs = std::filesystem;

class ModuleEnvironmentsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    root_ = fs::temp_directory_path() / ("og-modules-" + std::to_string(getpid()) + "-" +
                                         ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(root_);
    fs::create_directories(root_ / "site" / "pkg");
    Write("site/pkg/__init__.py", "VALUE = 1\n");
    Write("site/pkg/tool", "#!/bin/sh\n");
    fs::permissions(root_ / "site" / "pkg" / "tool", fs::perms::owner_all | fs::perms::group_all);
    fs::create_symlink("pkg/__init__.py", root_ / "site" / "alias.py");
  }
  void TearDown() override { fs::remove_all(root_); }
  void Write(const std::string& rel, const std::string& text) {
    std::ofstream(root_ / rel, std::ios::binary) << text;
  }
  std::string Site() const { return (root_ / "site").string(); }
  fs::path root_;
};

TEST_F(ModuleEnvironmentsTest, ManifestListsEveryEntryWithItsHash) {
  Result<Json> manifest = BuildManifest(Site());
  ASSERT_TRUE(manifest.ok()) << manifest.status().message();
  const Json& entries = (*manifest)["entries"];
  ASSERT_EQ(entries.size(), 4u);
  EXPECT_EQ(entries[0], Json::array({"alias.py", "l", "pkg/__init__.py"}));
  EXPECT_EQ(entries[1][0], "pkg");
  EXPECT_EQ(entries[1][1], "d");
  EXPECT_EQ(entries[2][0], "pkg/__init__.py");
  EXPECT_EQ(entries[2][3], 10u);
  // sha256("VALUE = 1\n")
  EXPECT_EQ(entries[2][4], "e13df8c44af5dea1e412403910b99cc5a48f2ccbf68a66b3374d6ab9cef9fc65")
      << "the hash of the file's content";
  EXPECT_TRUE(VerifyManifest(Site(), *manifest).ok());
}

TEST_F(ModuleEnvironmentsTest, VerifyNamesWhatChanged) {
  Result<Json> manifest = BuildManifest(Site());
  ASSERT_TRUE(manifest.ok());
  Write("site/pkg/__init__.py", "VALUE = 2\n");
  Status changed = VerifyManifest(Site(), *manifest);
  EXPECT_EQ(changed.message(), "site/pkg/__init__.py: content differs (SHA-256)");
  Write("site/pkg/__init__.py", "VALUE = 1\n");
  EXPECT_TRUE(VerifyManifest(Site(), *manifest).ok());
  Write("site/extra.py", "");
  EXPECT_EQ(VerifyManifest(Site(), *manifest).message(), "site/extra.py: not in the manifest");
  fs::remove(root_ / "site" / "extra.py");
  fs::remove(root_ / "site" / "pkg" / "tool");
  EXPECT_EQ(VerifyManifest(Site(), *manifest).message(), "site/pkg/tool: missing");
  EXPECT_FALSE(VerifyManifest(Site(), Json::object()).ok());
}

TEST_F(ModuleEnvironmentsTest, SealTakesWritePermissionsAndRefusesHardLinksAndSpecialFiles) {
  fs::permissions(root_ / "site" / "pkg" / "__init__.py", fs::perms::all);
  ASSERT_TRUE(SealTree(root_.string(), geteuid(), getegid()).ok());
  struct stat st;
  ASSERT_EQ(stat((root_ / "site" / "pkg" / "__init__.py").c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 07777, 0755u);  // it had execute bits
  ASSERT_EQ(stat((root_ / "site" / "pkg" / "tool").c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 07777, 0755u);
  ASSERT_EQ(stat((root_ / "site" / "pkg").c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 07777, 0755u);
  Write("plain.txt", "x");
  fs::permissions(root_ / "plain.txt", fs::perms::all);
  ASSERT_TRUE(SealTree(root_.string(), geteuid(), getegid()).ok());
  ASSERT_EQ(stat((root_ / "plain.txt").c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 07777, 0755u);

  fs::create_hard_link(root_ / "site" / "pkg" / "__init__.py", root_ / "site" / "linked.py");
  Status linked = SealTree(root_.string(), geteuid(), getegid());
  EXPECT_EQ(linked.code(), StatusCode::kInvalidInput);
  EXPECT_NE(linked.message().find("hard links"), std::string::npos) << linked.message();
  EXPECT_FALSE(BuildManifest(Site()).ok());
  fs::remove(root_ / "site" / "linked.py");
  ASSERT_EQ(mkfifo((root_ / "site" / "pipe").c_str(), 0600), 0);
  EXPECT_EQ(SealTree(root_.string(), geteuid(), getegid()).code(), StatusCode::kInvalidInput);
}

TEST_F(ModuleEnvironmentsTest, RemoveTreeOpensUpFoldersWithoutWritePermission) {
  fs::permissions(root_ / "site" / "pkg", fs::perms::owner_read | fs::perms::owner_exec);
  EXPECT_TRUE(RemoveTree(root_.string()).ok());
  EXPECT_FALSE(fs::exists(root_));
  EXPECT_TRUE(RemoveTree(root_.string()).ok());  // already gone
}

TEST_F(ModuleEnvironmentsTest, CleanRemovesIdleEnvironmentsNobodyUses) {
  const std::string cache = (root_ / "cache").string();
  const std::string idle(64, 'a'), used(64, 'b'), fresh(64, 'c');
  for (const std::string& key : {idle, used, fresh}) {
    fs::create_directories(fs::path(cache) / key / "site");
    std::ofstream(fs::path(cache) / (key + ".use.lock"));
  }
  fs::create_directories(fs::path(cache) / (".staging-" + idle + "-1234") / "site");
  int64_t now = static_cast<int64_t>(std::time(nullptr));
  int64_t day = 86400;
  struct timespec old_times[2] = {{now - 40 * day, 0}, {now - 40 * day, 0}};
  for (const std::string& key : {idle, used})
    ASSERT_EQ(utimensat(AT_FDCWD, (cache + "/" + key + ".use.lock").c_str(), old_times, 0), 0);
  // A run using `used` holds its use lock shared.
  int holder = open((cache + "/" + used + ".use.lock").c_str(), O_RDONLY);
  ASSERT_GE(holder, 0);
  ASSERT_EQ(flock(holder, LOCK_SH), 0);
  EXPECT_EQ(CleanPythonModulesCache(cache, now, 30 * day), 1);
  EXPECT_FALSE(fs::exists(fs::path(cache) / idle));
  EXPECT_FALSE(fs::exists(fs::path(cache) / (".staging-" + idle + "-1234")));
  EXPECT_TRUE(fs::exists(fs::path(cache) / used));
  EXPECT_TRUE(fs::exists(fs::path(cache) / fresh));
  close(holder);
  EXPECT_EQ(CleanPythonModulesCache(cache, now, 30 * day), 1);
  EXPECT_FALSE(fs::exists(fs::path(cache) / used));
  EXPECT_EQ(CleanPythonModulesCache(cache, now, 30 * day), 0);
  EXPECT_TRUE(fs::exists(fs::path(cache) / fresh));
  EXPECT_EQ(CleanPythonModulesCache((root_ / "missing").string(), now, day), 0);
}

}  // namespace
}  // namespace openglue::jobs
