#include "jobs/store_view.h"

#include <gtest/gtest.h>

namespace openglue::jobs {
namespace {

TEST(StoreViewArgs, NothingToDoForTheDefaultRoleWithoutCode) {
  EXPECT_TRUE(StoreViewArgs("/d/s3", StoreGrants{}, {}).empty());
}

TEST(StoreViewArgs, CodeFoldersShallowestFirstAndGrantsByMode) {
  std::map<std::string, std::string> code = {{"scripts/a/b/job.py", "j1"},
                                             {"scripts/top.py", "j2"},
                                             {"libs/shared/", "j3"},
                                             {"scripts/top2.py", "j4"}};
  EXPECT_EQ(StoreViewArgs("/d/s3", StoreGrants{}, code),
            (std::vector<std::string>{"/d/s3", "rw", "c", "libs/shared", "f", "scripts/top.py", "f",
                                      "scripts/top2.py", "c", "scripts/a/b", "--"}));
  StoreGrants narrow;
  narrow.read_all = narrow.write_all = false;
  narrow.read_folders = {"lake", "../etc", "lake"};
  narrow.read_objects = {"ref/t.csv"};
  narrow.write_folders = {"lake/out", "a//b"};
  EXPECT_EQ(StoreViewArgs("/d/s3", narrow, {}),
            (std::vector<std::string>{"/d/s3", "hidden", "r", "lake", "o", "ref/t.csv", "w", "lake/out", "--"}));
  StoreGrants read_all_write_some;
  read_all_write_some.write_all = false;
  read_all_write_some.write_folders = {"lake/out"};
  EXPECT_EQ(StoreViewArgs("/d/s3", read_all_write_some, {}),
            (std::vector<std::string>{"/d/s3", "ro", "w", "lake/out", "--"}));
}

}  // namespace
}  // namespace openglue::jobs
