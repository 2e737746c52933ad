#include "jobs/run_sandbox.h"

#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <thread>

#include <gtest/gtest.h>

#include "jobs/process_launcher.h"

namespace openglue::jobs {
namespace {

namespace fs = std::filesystem;

std::string ReadWhenWritten(const std::string& path) {
  for (int i = 0; i < 500; ++i) {
    std::ifstream in(path);
    std::string text;
    if (in && std::getline(in, text) && !text.empty()) return text;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  return "";
}

bool Alive(int pid) {
  std::ifstream stat("/proc/" + std::to_string(pid) + "/stat");
  std::string text;
  if (!std::getline(stat, text)) return false;
  size_t paren = text.rfind(')');
  return paren != std::string::npos && paren + 2 < text.size() && text[paren + 2] != 'Z';
}

class RunSandboxTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (geteuid() != 0) GTEST_SKIP() << "job users and cgroups need root";
    char tmpl[] = "/tmp/og_sandbox_test_XXXXXX";
    ASSERT_NE(mkdtemp(tmpl), nullptr);
    dir_ = tmpl;
    chmod(dir_.c_str(), 0711);
  }
  void TearDown() override {
    std::error_code ec;
    if (!dir_.empty()) fs::remove_all(dir_, ec);
  }
  LaunchSpec Spec(const std::string& script) {
    LaunchSpec spec;
    spec.argv = {"/bin/sh", "-c", script};
    spec.env = {"PATH=/usr/bin:/bin", "HOME=/root"};
    spec.run_dir = dir_ + "/run";
    fs::create_directories(spec.run_dir + "/work");
    spec.working_dir = spec.run_dir + "/work";
    spec.stdout_path = dir_ + "/out";
    spec.stderr_path = dir_ + "/err";
    spec.exit_code_path = spec.run_dir + "/exit_code";
    return spec;
  }
  std::string dir_;
};

TEST_F(RunSandboxTest, KillingTheGroupKillsASetsidGrandchildThroughTheCgroup) {
  std::string root = FindCgroupRoot();
  if (root.empty()) GTEST_SKIP() << "no writable cgroup v2 hierarchy";
  PosixLauncherOptions options;
  options.cgroup_root = root;
  auto launcher = MakePosixProcessLauncher(options);
  LaunchSpec spec = Spec("setsid sleep 300 & echo $! > ../escaped; sleep 300");
  Result<int> pid = launcher->Launch(spec);
  ASSERT_TRUE(pid.ok()) << pid.status().ToString();
  std::string escaped = ReadWhenWritten(spec.run_dir + "/escaped");
  ASSERT_FALSE(escaped.empty());
  int grandchild = std::stoi(escaped);
  ASSERT_TRUE(Alive(grandchild));
  ASSERT_TRUE(launcher->SignalGroup(*pid, SIGKILL).ok());
  for (int i = 0; i < 500 && Alive(grandchild); ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  EXPECT_FALSE(Alive(grandchild)) << "the setsid() grandchild survived its run";
  for (int i = 0; i < 500 && launcher->Check(*pid, spec.exit_code_path).state == ProcessState::kRunning; ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
}

TEST_F(RunSandboxTest, PerRunUidsOwnTheirFolderAndShareTheObjectStoreGroup) {
  auto user = ResolveJobUser("auto", 1000000000, 1000);
  ASSERT_TRUE(user.ok());
  ASSERT_TRUE(user->enabled);
  PosixLauncherOptions options;
  options.user = *user;
  auto launcher = MakePosixProcessLauncher(options);
  int uids[2] = {0, 0};
  for (int i = 0; i < 2; ++i) {
    LaunchSpec spec = Spec("echo $(id -u) $(id -G) $HOME > ../ids");
    Result<int> pid = launcher->Launch(spec);
    ASSERT_TRUE(pid.ok()) << pid.status().ToString();
    std::string ids = ReadWhenWritten(spec.run_dir + "/ids");
    if (ids.empty()) {
      std::ifstream err(spec.stderr_path);
      std::string text((std::istreambuf_iterator<char>(err)), std::istreambuf_iterator<char>());
      ADD_FAILURE() << "no ids; stderr: " << text;
    }
    std::istringstream in(ids);
    int uid = 0, gid = 0, shared = 0;
    std::string home;
    in >> uid >> gid >> shared >> home;
    EXPECT_GT(uid, 1000000000);
    EXPECT_LE(uid, 1000001000);
    EXPECT_EQ(gid, uid);
    EXPECT_EQ(shared, 1000000000);
    EXPECT_EQ(home, spec.run_dir);
    struct stat st;
    ASSERT_EQ(stat(spec.run_dir.c_str(), &st), 0);
    EXPECT_EQ(static_cast<int>(st.st_uid), uid);
    EXPECT_EQ(st.st_mode & 0777, 0700u);
    uids[i] = uid;
    for (int j = 0; j < 500 && launcher->Check(*pid, spec.exit_code_path).state == ProcessState::kRunning; ++j)
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    fs::remove_all(spec.run_dir);
  }
  EXPECT_NE(uids[0], uids[1]);  // each run its own uid
}

TEST(ResolveJobUser, NoneAndUnknownUsers) {
  auto none = ResolveJobUser("none", 1000000000, 10);
  ASSERT_TRUE(none.ok());
  EXPECT_FALSE(none->enabled);
  if (geteuid() == 0) {
    EXPECT_FALSE(ResolveJobUser("no-such-user-og", 1, 1).ok());
  }
  EXPECT_FALSE(ResolveJobUser("root", 1, 1).ok());
}

}  // namespace
}  // namespace openglue::jobs
