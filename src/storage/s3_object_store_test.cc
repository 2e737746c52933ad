// S3ObjectStore against a real S3 server: versitygw (posix backend, `make deps` builds it into
// the venv) started by this test on a free port over a temporary folder, through S3ApiServer.
// The ObjectStore conformance suite runs on it as it runs on LocalObjectStore.
#include "storage/s3_object_store.h"

#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <mutex>

#include <gtest/gtest.h>

#include "common/config.h"
#include "common/random.h"
#include "storage/object_store_conformance.h"
#include "storage/s3_api_server.h"

namespace openglue::storage {
namespace {

namespace fs = std::filesystem;

// $OPENGLUE_VERSITYGW, else versitygw next to the build's Python (the venv), else on PATH.
std::string FindVersitygw() {
  if (const char* env = std::getenv("OPENGLUE_VERSITYGW")) return env;
  std::string python = BuildPython();
  size_t slash = python.rfind('/');
  if (slash != std::string::npos && access((python.substr(0, slash) + "/versitygw").c_str(), X_OK) == 0)
    return python.substr(0, slash) + "/versitygw";
  const char* path = std::getenv("PATH");
  std::string dirs = path ? path : "";
  size_t start = 0;
  while (start <= dirs.size()) {
    size_t end = dirs.find(':', start);
    if (end == std::string::npos) end = dirs.size();
    std::string candidate = dirs.substr(start, end - start) + "/versitygw";
    if (end > start && access(candidate.c_str(), X_OK) == 0) return candidate;
    start = end + 1;
  }
  return "";
}

// One versitygw per test process, started on first use, stopped at exit.
class Gateway {
 public:
  static Gateway& Get() {
    static Gateway* gateway = new Gateway();
    return *gateway;
  }
  // kUnknownOperation (the suite's "skip") when there is no binary.
  Status Ensure() {
    std::lock_guard<std::mutex> lock(mu_);
    if (server_) return Status::OK();
    std::string binary = FindVersitygw();
    if (binary.empty())
      return Status(StatusCode::kUnknownOperation,
                    "versitygw not found (run `make deps`, or set OPENGLUE_VERSITYGW): the S3 "
                    "conformance tests need a real S3 server");
    SystemRandom random;
    dir_ = (fs::temp_directory_path() / ("og-s3-test-" + random.Hex(6))).string();
    S3ApiServerOptions options;
    options.binary = binary;
    options.root_dir = dir_ + "/store";
    options.state_dir = dir_ + "/state";
    options.root_access_key = "OGTEST" + random.Hex(6);
    options.root_secret_key = random.Hex(20);
    OG_ASSIGN_OR_RETURN(options.port, S3ApiServer::PickFreePort("127.0.0.1"));
    OG_ASSIGN_OR_RETURN(server_, S3ApiServer::Make(options));
    OG_RETURN_NOT_OK(server_->Start());
    options_.endpoint = server_->endpoint();
    options_.access_key = options.root_access_key;
    options_.secret_key = options.root_secret_key;
    options_.request_timeout_seconds = 10;
    return Status::OK();
  }
  void Shutdown() {
    std::lock_guard<std::mutex> lock(mu_);
    if (server_) server_->Stop();
    server_.reset();
    std::error_code ec;
    if (!dir_.empty()) fs::remove_all(dir_, ec);
    S3ObjectStore::Finalize();
  }
  S3ObjectStoreOptions options() {
    std::lock_guard<std::mutex> lock(mu_);
    return options_;
  }
  std::string store_dir() const { return dir_ + "/store"; }

 private:
  std::mutex mu_;
  std::unique_ptr<S3ApiServer> server_;
  std::string dir_;
  S3ObjectStoreOptions options_;
};

class GatewayEnvironment : public ::testing::Environment {
 public:
  void TearDown() override { Gateway::Get().Shutdown(); }
};
[[maybe_unused]] const auto* const kEnvironment = ::testing::AddGlobalTestEnvironment(new GatewayEnvironment);

Result<std::unique_ptr<ObjectStore>> MakeS3Store() {
  OG_RETURN_NOT_OK(Gateway::Get().Ensure());
  OG_ASSIGN_OR_RETURN(auto store, S3ObjectStore::Make(Gateway::Get().options()));
  return std::unique_ptr<ObjectStore>(std::move(store));
}

INSTANTIATE_TEST_SUITE_P(S3, ObjectStoreConformance,
                         ::testing::Values(ObjectStoreFactory{"versitygw", MakeS3Store}),
                         ObjectStoreFactory::Name);

class S3ObjectStoreTest : public ::testing::Test {
 protected:
  void SetUp() override {
    Status st = Gateway::Get().Ensure();
    if (st.code() == StatusCode::kUnknownOperation) GTEST_SKIP() << st.message();
    ASSERT_TRUE(st.ok()) << st.ToString();
  }
};

TEST_F(S3ObjectStoreTest, ObjectsAreTheServersFiles) {
  auto store = S3ObjectStore::Make(Gateway::Get().options());
  ASSERT_TRUE(store.ok()) << store.status().ToString();
  ASSERT_TRUE((*store)->CreateBucket("files-bucket").ok());
  ASSERT_TRUE((*store)->Write("files-bucket", "dir/a.csv", "id\n1\n").ok());
  std::ifstream in(Gateway::Get().store_dir() + "/files-bucket/dir/a.csv");
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  EXPECT_EQ(text, "id\n1\n");
  // A file placed in the folder is an object.
  std::ofstream(Gateway::Get().store_dir() + "/files-bucket/dir/placed.txt") << "placed";
  EXPECT_EQ(*(*store)->ReadAll("files-bucket", "dir/placed.txt"), "placed");
}

TEST_F(S3ObjectStoreTest, WrongCredentialsFailCleanly) {
  S3ObjectStoreOptions options = Gateway::Get().options();
  options.secret_key = "wrong";
  auto store = S3ObjectStore::Make(options);
  ASSERT_TRUE(store.ok()) << store.status().ToString();
  Status st = (*store)->Write("some-bucket", "k", "v");
  EXPECT_FALSE(st.ok());
  EXPECT_NE(st.code(), StatusCode::kOk);
  ListRequest request;
  request.bucket = "some-bucket";
  auto listed = (*store)->List(request);
  EXPECT_FALSE(listed.ok());
}

TEST(S3ObjectStoreOptionsTest, EndpointMustBeSchemeHostPort) {
  for (const char* bad : {"127.0.0.1:9000", "ftp://x", "http://", "http://host/path"}) {
    S3ObjectStoreOptions options;
    options.endpoint = bad;
    options.access_key = "a";
    options.secret_key = "b";
    EXPECT_EQ(S3ObjectStore::Make(options).status().code(), StatusCode::kInvalidInput) << bad;
  }
}

}  // namespace
}  // namespace openglue::storage
