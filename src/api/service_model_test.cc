#include "api/service_model.h"

#include <stdlib.h>

#include <filesystem>

#include <gtest/gtest.h>

#include "common/clock.h"
#include "logs/log_store.h"

#include "api/router.h"

namespace openglue::api {
namespace {

class ServiceModelTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto made = ServiceModel::MakeEmbedded();
    ASSERT_TRUE(made.ok()) << made.status().ToString();
    model_ = std::move(*made);
  }
  Status Validate(const std::string& op, const std::string& body) {
    Json request = Json::parse(body);
    return model_->Validate(op, &request);
  }
  std::unique_ptr<ServiceModel> model_;
};

TEST_F(ServiceModelTest, EmbeddedModelHasGlueOperations) {
  EXPECT_TRUE(model_->HasOperation("CreateDatabase"));
  EXPECT_TRUE(model_->HasOperation("GetPartitions"));
  EXPECT_FALSE(model_->HasOperation("MakeCoffee"));
  EXPECT_GT(model_->OperationNames().size(), 200u);
}

TEST_F(ServiceModelTest, AcceptsAWellFormedRequest) {
  EXPECT_TRUE(Validate("CreateDatabase", R"({"DatabaseInput":{"Name":"sales"}})").ok());
  EXPECT_TRUE(Validate("GetPartitions",
                       R"({"DatabaseName":"d","TableName":"t","MaxResults":1000,"Unknown":1})")
                  .ok());
}

TEST_F(ServiceModelTest, MissingRequiredMemberIsAValidationError) {
  Status st = Validate("CreateDatabase", R"({"DatabaseInput":{}})");
  EXPECT_EQ(st.code(), StatusCode::kValidation);
  EXPECT_EQ(st.message(),
            "1 validation error detected: Value null at 'databaseInput.name' failed to satisfy "
            "constraint: Member must not be null");
}

TEST_F(ServiceModelTest, LimitsAreValidationErrorsListingEveryViolation) {
  std::string long_name(256, 'a');
  Status st = Validate("GetPartitions", R"({"DatabaseName":")" + long_name +
                                            R"(","TableName":"","MaxResults":1001})");
  EXPECT_EQ(st.code(), StatusCode::kValidation);
  EXPECT_NE(st.message().find("3 validation errors detected"), std::string::npos) << st.message();
  EXPECT_NE(st.message().find("at 'databaseName' failed to satisfy constraint: Member must have "
                              "length less than or equal to 255"),
            std::string::npos);
  EXPECT_NE(st.message().find("Value '1001' at 'maxResults'"), std::string::npos);
}

TEST_F(ServiceModelTest, EnumsAreChecked) {
  Status st = Validate("SearchTables", R"({"SortCriteria":[{"FieldName":"Name","Sort":"UP"}]})");
  EXPECT_EQ(st.code(), StatusCode::kValidation);
  EXPECT_NE(st.message().find("Member must satisfy enum value set: [ASC, DESC]"), std::string::npos)
      << st.message();
}

TEST_F(ServiceModelTest, SingleLineNamePatternRefusesControlCharacters) {
  Status st = Validate("CreateDatabase", "{\"DatabaseInput\":{\"Name\":\"bad\\nname\"}}");
  EXPECT_EQ(st.code(), StatusCode::kValidation);
  EXPECT_NE(st.message().find("Member must satisfy regular expression pattern"), std::string::npos)
      << st.message();
  EXPECT_TRUE(Validate("CreateDatabase", "{\"DatabaseInput\":{\"Name\":\"tab\\tok \u00e9\"}}").ok());
}

TEST_F(ServiceModelTest, WrongTypesAreSerializationErrorsNamingTheMember) {
  Status st = Validate("CreateDatabase", R"({"DatabaseInput":"sales"})");
  EXPECT_EQ(st.code(), StatusCode::kSerialization);
  EXPECT_NE(st.message().find("databaseInput"), std::string::npos);
  st = Validate("GetPartitions", R"({"DatabaseName":"d","TableName":"t","MaxResults":"10"})");
  EXPECT_EQ(st.code(), StatusCode::kSerialization);
  st = Validate("CreatePartition",
                R"({"DatabaseName":"d","TableName":"t","PartitionInput":{"Values":"2024"}})");
  EXPECT_EQ(st.code(), StatusCode::kSerialization);
  EXPECT_NE(st.message().find("partitionInput.values"), std::string::npos) << st.message();
}

TEST_F(ServiceModelTest, IsoTimestampsAreNormalizedToEpochSeconds) {
  Json request = Json::parse(
      R"({"DatabaseName":"d","TableInput":{"Name":"t","LastAccessTime":"2024-01-02T03:04:05Z"}})");
  ASSERT_TRUE(model_->Validate("CreateTable", &request).ok());
  EXPECT_DOUBLE_EQ(request["TableInput"]["LastAccessTime"].get<double>(), 1704164645.0);
}

TEST(RouterTest, UnknownAndUnimplementedOperationsAreNamed) {
  auto model = ServiceModel::MakeEmbedded();
  ASSERT_TRUE(model.ok());
  Router router(model->get());
  router.RegisterGlue("GetDatabases", [](const Json&) -> Result<Json> { return Json::object(); });
  WireResponse unknown = router.Handle("AWSGlue.MakeCoffee", "{}");
  EXPECT_EQ(unknown.http_status, 400);
  EXPECT_EQ(Json::parse(unknown.body)["__type"], "UnknownOperationException");
  WireResponse missing = router.Handle("", "{}");
  EXPECT_EQ(Json::parse(missing.body)["__type"], "UnknownOperationException");
  WireResponse bad_json = router.Handle("AWSGlue.GetDatabases", "{not json");
  EXPECT_EQ(Json::parse(bad_json.body)["__type"], "SerializationException");
  WireResponse ok = router.Handle("AWSGlue.GetDatabases", "");
  EXPECT_EQ(ok.http_status, 200);
}

TEST(RouterTest, HandlerExceptionsBecomeInternalErrors) {
  auto model = ServiceModel::MakeEmbedded();
  ASSERT_TRUE(model.ok());
  Router router(model->get());
  router.RegisterGlue("GetDatabases", [](const Json&) -> Result<Json> {
    throw std::runtime_error("boom");
  });
  WireResponse out = router.Handle("AWSGlue.GetDatabases", "{}");
  EXPECT_EQ(out.http_status, 500);
  EXPECT_EQ(Json::parse(out.body)["__type"], "InternalServiceException");
}

TEST(LogsModelTest, LogsRequestsAreValidatedAgainstTheLogsModel) {
  auto model = ServiceModel::MakeEmbeddedLogs();
  ASSERT_TRUE(model.ok()) << model.status().ToString();
  EXPECT_TRUE((*model)->HasOperation("FilterLogEvents"));
  EXPECT_TRUE((*model)->HasOperation("GetLogEvents"));
  EXPECT_FALSE((*model)->HasOperation("CreateDatabase"));
  auto validate = [&](const std::string& op, const std::string& body) {
    Json request = Json::parse(body);
    return (*model)->Validate(op, &request);
  };
  EXPECT_TRUE(validate("FilterLogEvents", R"({"logGroupName":"/aws-glue/jobs/output"})").ok());
  Json long_pattern = {{"logGroupName", "/g"}, {"filterPattern", std::string(1025, 'a')}};
  Status st = (*model)->Validate("FilterLogEvents", &long_pattern);
  EXPECT_EQ(st.code(), StatusCode::kValidation);
  EXPECT_NE(st.message().find("'filterPattern'"), std::string::npos) << st.message();
  Json at_limit = {{"logGroupName", "/g"}, {"filterPattern", std::string(1024, 'a')}};
  EXPECT_TRUE((*model)->Validate("FilterLogEvents", &at_limit).ok());
  EXPECT_EQ(validate("GetLogEvents", R"({"logGroupName":"/g"})").code(), StatusCode::kValidation);
  EXPECT_EQ(validate("GetLogEvents", R"({"logGroupName":"/g","logStreamName":"s","limit":10001})")
                .code(),
            StatusCode::kValidation);
  EXPECT_EQ(validate("DescribeLogStreams", R"({"logGroupName":"/g","orderBy":"Size"})").code(),
            StatusCode::kValidation);
  EXPECT_EQ(validate("FilterLogEvents", R"({"logGroupName":"/g","logStreamNames":[]})").code(),
            StatusCode::kValidation);
  EXPECT_EQ(validate("GetLogEvents", R"({"logGroupName":"/g","logStreamName":"s","limit":"5"})")
                .code(),
            StatusCode::kSerialization);
  EXPECT_EQ(validate("FilterLogEvents", R"({"logGroupName":"/g","startTime":-1})").code(),
            StatusCode::kValidation);
}

TEST(LogsModelTest, TheRouterAnswersWithCloudWatchErrorNames) {
  auto glue = ServiceModel::MakeEmbedded();
  auto logs_model = ServiceModel::MakeEmbeddedLogs();
  ASSERT_TRUE(glue.ok() && logs_model.ok());
  char dir[] = "/tmp/og_router_logs_XXXXXX";
  ASSERT_NE(mkdtemp(dir), nullptr);
  FakeClock clock(1'700'000'000'000);
  auto store = logs::LogStore::Make(std::string(dir) + "/logs", &clock, {});
  ASSERT_TRUE(store.ok());
  Router router(glue->get(), logs_model->get());
  router.RegisterLogs(store->get());
  auto type = [](const WireResponse& r) { return Json::parse(r.body)["__type"]; };
  Json too_long = {{"logGroupName", "/aws-glue/jobs/output"},
                   {"filterPattern", std::string(5000, 'a')}};
  WireResponse r = router.Handle("Logs_20140328.FilterLogEvents", DumpJson(too_long));
  EXPECT_EQ(r.http_status, 400);
  EXPECT_EQ(type(r), "InvalidParameterException");
  r = router.Handle("Logs_20140328.GetLogEvents",
                    R"({"logGroupName":"/aws-glue/jobs/output","logStreamName":7})");
  EXPECT_EQ(type(r), "SerializationException");
  r = router.Handle("Logs_20140328.GetLogEvents",
                    R"({"logGroupName":"/aws-glue/jobs/output","logStreamName":"nope"})");
  EXPECT_EQ(type(r), "ResourceNotFoundException");
  r = router.Handle("Logs_20140328.DescribeLogStreams",
                    R"({"logGroupName":"/aws-glue/jobs/output","limit":51})");
  EXPECT_EQ(type(r), "InvalidParameterException");
  r = router.Handle("Logs_20140328.FilterLogEvents",
                    R"({"logGroupName":"/aws-glue/jobs/output","filterPattern":"ERROR"})");
  EXPECT_EQ(r.http_status, 200);
  store->reset();
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace openglue::api
