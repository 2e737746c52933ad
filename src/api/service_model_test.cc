#include "api/service_model.h"

#include <gtest/gtest.h>

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

}  // namespace
}  // namespace openglue::api
