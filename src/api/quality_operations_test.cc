// The data-quality operations through the Router with the embedded service model: Glue's are
// validated against the model, the extension OpenGluePublishDataQualityResult against the
// model's shapes (InvalidInputException, not ValidationException), and a run's credential
// publishes as its own run.
#include "api/quality_operations.h"

#include <gtest/gtest.h>

#include <filesystem>

#include "store/sqlite_store.h"

namespace openglue::api {
namespace {

class QualityOperationsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char pattern[] = "/tmp/og-api-quality-XXXXXX";
    dir_ = mkdtemp(pattern);
    auto store = store::SqliteStore::Make(dir_ + "/catalog.db");
    ASSERT_TRUE(store.ok());
    store_ = std::move(*store);
    auto model = ServiceModel::MakeEmbedded();
    ASSERT_TRUE(model.ok());
    model_ = std::move(*model);
    auto service = quality::QualityService::Make(store_.get(), &clock_, &random_, {});
    ASSERT_TRUE(service.ok());
    service_ = std::move(*service);
    router_ = std::make_unique<Router>(model_.get());
    RegisterDataQuality(router_.get(), service_.get(), model_.get(), &authorizer_);
    authorizer_.AddRun("OGRUNKEY", {"orders", "jr_1", "SomeRole"});
  }
  void TearDown() override {
    router_.reset();
    service_.reset();
    store_.reset();
    std::filesystem::remove_all(dir_);
  }
  Json Call(const std::string& operation, const Json& body, const std::string& principal,
            int status = 200) {
    WireResponse response = router_->Handle("AWSGlue." + operation, DumpJson(body), principal);
    EXPECT_EQ(response.http_status, status) << operation << ": " << response.body;
    return Json::parse(response.body);
  }
  static Json Publish() {
    return Json{{"Score", 1.0},
                {"StartedOn", 1772323200},
                {"CompletedOn", "2026-03-01T00:00:05Z"},
                {"RuleResults", {{{"Name", "Rule_1"}, {"Result", "PASS"}, {"Extra", 1}}}}};
  }

  std::string dir_;
  FakeClock clock_{1772323200000LL};
  SeededRandom random_{7};
  RunAuthorizer authorizer_{{"admin"}, {}};
  std::unique_ptr<store::SqliteStore> store_;
  std::unique_ptr<ServiceModel> model_;
  std::unique_ptr<quality::QualityService> service_;
  std::unique_ptr<Router> router_;
};

TEST_F(QualityOperationsTest, GlueOperationsAreRegisteredAndValidated) {
  for (const auto& [name, method] : quality::QualityService::Operations())
    EXPECT_TRUE(router_->Implements(name)) << name;
  EXPECT_EQ(router_->ExtensionOperations(), DataQualityExtensionOperations());
  Json missing = Call("CreateDataQualityRuleset", Json{{"Name", "r"}}, "admin", 400);
  EXPECT_EQ(missing["__type"], "ValidationException");
  Json created = Call("CreateDataQualityRuleset",
                      Json{{"Name", "r"}, {"Ruleset", "Rules = [ RowCount > 0 ]"}}, "admin");
  EXPECT_EQ(created, (Json{{"Name", "r"}}));
}

TEST_F(QualityOperationsTest, PublishIsCheckedAgainstTheModelShapes) {
  // Nested members the model does not know are dropped; ISO timestamps become epoch seconds.
  std::string id = Call("OpenGluePublishDataQualityResult", Publish(), "admin")["ResultId"];
  Json got = Call("GetDataQualityResult", Json{{"ResultId", id}}, "admin");
  EXPECT_EQ(got["RuleResults"], (Json{{{"Name", "Rule_1"}, {"Result", "PASS"}}}));
  EXPECT_EQ(got["CompletedOn"], 1772323205.0);
  EXPECT_FALSE(got.contains("JobName"));

  Json bad = Publish();
  bad["RuleResults"][0]["Result"] = "MAYBE";
  Json refused = Call("OpenGluePublishDataQualityResult", bad, "admin", 400);
  EXPECT_EQ(refused["__type"], "InvalidInputException");
  EXPECT_NE(refused["message"].get<std::string>().find("ruleResults.1.member.result"), std::string::npos)
      << refused;
  bad = Publish();
  bad["Score"] = 2;
  refused = Call("OpenGluePublishDataQualityResult", bad, "admin", 400);
  EXPECT_EQ(refused["__type"], "InvalidInputException");
  EXPECT_NE(refused["message"].get<std::string>().find("score"), std::string::npos) << refused;
}

TEST_F(QualityOperationsTest, ARunCredentialPublishesAsItsRun) {
  EXPECT_FALSE(QualityPublisher(&authorizer_, "admin").is_run);
  EXPECT_FALSE(QualityPublisher(&authorizer_, "").is_run);
  quality::Publisher run = QualityPublisher(&authorizer_, "OGRUNKEY");
  EXPECT_TRUE(run.is_run);
  EXPECT_EQ(run.job, "orders");
  EXPECT_EQ(run.run_id, "jr_1");

  std::string id = Call("OpenGluePublishDataQualityResult", Publish(), "OGRUNKEY")["ResultId"];
  Json got = Call("GetDataQualityResult", Json{{"ResultId", id}}, "admin");
  EXPECT_EQ(got["JobName"], "orders");
  EXPECT_EQ(got["JobRunId"], "jr_1");
  Json other = Publish();
  other["JobName"] = "payroll";
  Json denied = Call("OpenGluePublishDataQualityResult", other, "OGRUNKEY", 400);
  EXPECT_EQ(denied["__type"], "AccessDeniedException");
}

}  // namespace
}  // namespace openglue::api
