// S3ApiServer with stand-in programs (no versitygw needed): option checks, the accounts file,
// a child that never listens, and restarts after a death.
#include "storage/s3_api_server.h"

#include <signal.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <thread>

#include <gtest/gtest.h>

#include "common/json.h"
#include "common/random.h"

namespace openglue::storage {
namespace {

namespace fs = std::filesystem;

class S3ApiServerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    SystemRandom random;
    dir_ = (fs::temp_directory_path() / ("og-s3api-" + random.Hex(6))).string();
    fs::create_directories(dir_);
    options_.root_dir = dir_ + "/store";
    options_.state_dir = dir_ + "/state";
    options_.root_access_key = "root";
    options_.root_secret_key = "root-secret";
    options_.port = *S3ApiServer::PickFreePort("127.0.0.1");
  }
  void TearDown() override {
    std::error_code ec;
    fs::remove_all(dir_, ec);
  }
  // A shell script standing in for versitygw.
  std::string Script(const std::string& body) {
    std::string path = dir_ + "/fake-gateway.sh";
    std::ofstream(path) << "#!/bin/sh\n" << body << "\n";
    fs::permissions(path, fs::perms::owner_all);
    return path;
  }
  std::string dir_;
  S3ApiServerOptions options_;
};

TEST_F(S3ApiServerTest, OptionsAreChecked) {
  options_.binary = dir_ + "/missing";
  EXPECT_EQ(S3ApiServer::Make(options_).status().code(), StatusCode::kInvalidInput);
  options_.binary = "/bin/true";
  options_.root_secret_key = "";
  EXPECT_EQ(S3ApiServer::Make(options_).status().code(), StatusCode::kInvalidInput);
  options_.root_secret_key = "x";
  options_.port = 0;
  EXPECT_EQ(S3ApiServer::Make(options_).status().code(), StatusCode::kInvalidInput);
}

TEST_F(S3ApiServerTest, GrantAndRevokeRewriteTheAccountsFile) {
  options_.binary = "/bin/true";
  auto server = S3ApiServer::Make(options_);
  ASSERT_TRUE(server.ok()) << server.status().ToString();
  // The accounts file is not under the state folder (secrets stay off the disk).
  for (const auto& entry : fs::recursive_directory_iterator(dir_))
    EXPECT_NE(entry.path().filename(), "users.json") << entry.path();
  ASSERT_TRUE((*server)->Grant("OGRUNabc", "s1").ok());
  ASSERT_TRUE((*server)->Grant("OGRUNdef", "s2").ok());
  ASSERT_TRUE((*server)->Revoke("OGRUNabc").ok());
  ASSERT_TRUE((*server)->Revoke("never-granted").ok());
  std::string runtime = (*server)->runtime_dir();
  EXPECT_EQ(runtime.rfind("/dev/shm/", 0), 0u) << runtime;
  std::ifstream in(runtime + "/users.json");
  Json doc = ParseJson(std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>()));
  EXPECT_EQ(doc["accessAccounts"].size(), 1u);
  EXPECT_EQ(doc["accessAccounts"]["OGRUNdef"]["secret"], "s2");
  EXPECT_EQ(doc["accessAccounts"]["OGRUNdef"]["role"], "admin");
  EXPECT_EQ(fs::status(runtime).permissions() & fs::perms::all, fs::perms::owner_all);
  (*server)->Stop();
  EXPECT_FALSE(fs::exists(runtime)) << "Stop removes the secrets";
}

TEST_F(S3ApiServerTest, AChildThatNeverListensFailsStartWithItsLog) {
  options_.binary = Script("echo 'cannot bind: address already in use' >&2; exit 1");
  options_.ready_timeout_ms = 1500;
  options_.initial_backoff_ms = 50;
  auto server = S3ApiServer::Make(options_);
  ASSERT_TRUE(server.ok()) << server.status().ToString();
  Status st = (*server)->Start();
  EXPECT_EQ(st.code(), StatusCode::kInternal);
  EXPECT_NE(st.message().find("cannot bind: address already in use"), std::string::npos)
      << st.message();
  EXPECT_EQ((*server)->pid(), -1);
}

TEST_F(S3ApiServerTest, AnUnrunnableBinaryIsReported) {
  options_.binary = Script("exit 0");
  auto server = S3ApiServer::Make(options_);
  ASSERT_TRUE(server.ok());
  fs::permissions(options_.binary, fs::perms::owner_read);  // no longer executable
  Status st = (*server)->Start();
  EXPECT_EQ(st.code(), StatusCode::kInternal);
  EXPECT_NE(st.message().find("cannot run"), std::string::npos) << st.message();
}

TEST_F(S3ApiServerTest, ADeadChildIsRestartedAndStopEndsIt) {
  // Python's http.server stands in for versitygw: it listens on the port it is given.
  std::string python = "python3";
  options_.binary = Script("exec " + python +
                           " -c 'import http.server,sys; h,p=sys.argv[1].rsplit(\":\",1); "
                           "http.server.HTTPServer((h,int(p)),http.server.BaseHTTPRequestHandler).serve_forever()' \"$2\"");
  options_.initial_backoff_ms = 50;
  auto server = S3ApiServer::Make(options_);
  ASSERT_TRUE(server.ok());
  Status st = (*server)->Start();
  ASSERT_TRUE(st.ok()) << st.ToString();
  int first = (*server)->pid();
  ASSERT_GT(first, 0);
  EXPECT_EQ((*server)->starts(), 1);
  kill(first, SIGKILL);
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(20);
  while (((*server)->starts() < 2 || (*server)->pid() <= 0) && std::chrono::steady_clock::now() < deadline)
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  EXPECT_EQ((*server)->starts(), 2);
  int second = (*server)->pid();
  EXPECT_GT(second, 0);
  EXPECT_NE(second, first);
  (*server)->Stop();
  EXPECT_EQ((*server)->pid(), -1);
  EXPECT_NE(kill(second, 0), 0) << "the child outlived Stop";
}

}  // namespace
}  // namespace openglue::storage
