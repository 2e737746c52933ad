#include "common/secret_file.h"

#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include <gtest/gtest.h>

namespace openglue {
namespace {

std::string Contents(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream all;
  all << in.rdbuf();
  return all.str();
}

TEST(SecretFile, MadeOnceOwnerOnlyAndNeverOverwritten) {
  char pattern[] = "/tmp/og-secret-XXXXXX";
  const std::string dir = mkdtemp(pattern);
  const std::string path = dir + "/key";
  auto made = CreateSecretFile(path, std::string("k\0ey", 4));
  ASSERT_TRUE(made.ok()) << made.status().ToString();
  EXPECT_TRUE(*made);
  struct stat st;
  ASSERT_EQ(stat(path.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0600u);
  EXPECT_EQ(Contents(path), std::string("k\0ey", 4));
  auto again = CreateSecretFile(path, "other");
  ASSERT_TRUE(again.ok());
  EXPECT_FALSE(*again);
  EXPECT_EQ(Contents(path), std::string("k\0ey", 4));
  // Never through a symbolic link, and a missing folder is a clear error.
  ASSERT_EQ(symlink((dir + "/elsewhere").c_str(), (dir + "/link").c_str()), 0);
  auto via_link = CreateSecretFile(dir + "/link", "x");  // the link exists: nothing is made
  ASSERT_TRUE(via_link.ok());
  EXPECT_FALSE(*via_link);
  EXPECT_FALSE(std::filesystem::exists(dir + "/elsewhere"));
  auto missing = CreateSecretFile(dir + "/no/such/key", "x");
  EXPECT_EQ(missing.status().code(), StatusCode::kInvalidInput);
  EXPECT_NE(missing.status().message().find(dir + "/no/such/key"), std::string::npos);
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace openglue
