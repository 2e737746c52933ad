#include "api/authorizer.h"

#include <gtest/gtest.h>

#include <unistd.h>

#include <cstdlib>
#include <string>

#include "api/run_secrets.h"
#include "common/config.h"

namespace openglue::api {
namespace {

TEST(ActionMatches, IamWildcardsCaseInsensitive) {
  EXPECT_TRUE(ActionMatches("glue:GetTable", "glue:GetTable"));
  EXPECT_TRUE(ActionMatches("GLUE:gettable", "glue:GetTable"));
  EXPECT_TRUE(ActionMatches("glue:Get*", "glue:GetTables"));
  EXPECT_TRUE(ActionMatches("*", "logs:GetLogEvents"));
  EXPECT_TRUE(ActionMatches("glue:Get?able", "glue:GetTable"));
  EXPECT_TRUE(ActionMatches("glue:*Partition*", "glue:BatchCreatePartition"));
  EXPECT_FALSE(ActionMatches("glue:Get*", "glue:DeleteTable"));
  EXPECT_FALSE(ActionMatches("glue:GetTable", "glue:GetTables"));
  EXPECT_FALSE(ActionMatches("glue:Get?", "glue:GetTable"));
  EXPECT_FALSE(ActionMatches("logs:*", "glue:GetTable"));
  // Linear: a pathological pattern over a long action answers at once.
  std::string action = "glue:" + std::string(5000, 'a');
  EXPECT_FALSE(ActionMatches("glue:*a*a*a*a*a*a*a*a*a*a*a*a*b", action));
}

TEST(RunAuthorizer, FindRunAndBookmarkActions) {
  RunAuthorizer authorizer({"admin"}, {});
  EXPECT_FALSE(authorizer.FindRun("OGRUN1").has_value());
  authorizer.AddRun("OGRUN1", {"orders", "jr_1", "SomeRole"});
  auto run = authorizer.FindRun("OGRUN1");
  ASSERT_TRUE(run.has_value());
  EXPECT_EQ(run->job, "orders");
  EXPECT_EQ(run->run_id, "jr_1");
  EXPECT_TRUE(authorizer.IsAdministrator("admin"));
  EXPECT_FALSE(authorizer.IsAdministrator("OGRUN1"));
  // The default run policy: read and commit its bookmark, never reset it.
  for (const char* action : {"glue:GetJobBookmark", "glue:OpenGlueCommitJobBookmark",
                             "glue:OpenGlueGetJobBookmarkHistory"})
    EXPECT_TRUE(authorizer.Authorize("OGRUN1", action).ok()) << action;
  EXPECT_EQ(authorizer.Authorize("OGRUN1", "glue:ResetJobBookmark").code(),
            StatusCode::kAccessDenied);
  // Data quality: publish results, report recommendations and read; never administer rulesets
  // or start and cancel data-quality runs.
  for (const char* action : {"glue:OpenGluePublishDataQualityResult",
                             "glue:OpenGluePutDataQualityRecommendation", "glue:GetDataQualityResult",
                             "glue:ListDataQualityResults", "glue:BatchGetDataQualityResult",
                             "glue:GetDataQualityRuleset", "glue:ListDataQualityRulesets"})
    EXPECT_TRUE(authorizer.Authorize("OGRUN1", action).ok()) << action;
  for (const char* action : {"glue:CreateDataQualityRuleset", "glue:UpdateDataQualityRuleset",
                             "glue:DeleteDataQualityRuleset", "glue:StartDataQualityRulesetEvaluationRun",
                             "glue:CancelDataQualityRulesetEvaluationRun"})
    EXPECT_EQ(authorizer.Authorize("OGRUN1", action).code(), StatusCode::kAccessDenied) << action;
  authorizer.RemoveRun("OGRUN1");
  EXPECT_FALSE(authorizer.FindRun("OGRUN1").has_value());
}

TEST(RunAuthorizer, AdministratorsRunsAndStrangers) {
  RunAuthorizer authorizer({"admin"}, {{"Narrow", {"glue:GetTable"}}, {"Wide", {"glue:*"}}});
  EXPECT_TRUE(authorizer.Authorize("admin", "glue:DeleteJob").ok());
  EXPECT_TRUE(authorizer.Authorize("", "glue:DeleteJob").ok());  // auth = none
  Status stranger = authorizer.Authorize("OGRUNx", "glue:GetTable");
  EXPECT_EQ(stranger.code(), StatusCode::kAccessDenied);

  authorizer.AddRun("OGRUN1", {"job", "jr_1", "SomeRole"});
  EXPECT_TRUE(authorizer.Authorize("OGRUN1", "glue:GetTable").ok());
  EXPECT_TRUE(authorizer.Authorize("OGRUN1", "glue:BatchCreatePartition").ok());
  EXPECT_TRUE(authorizer.Authorize("OGRUN1", "logs:GetLogEvents").ok());
  for (const char* denied : {"glue:DeleteDatabase", "glue:DeleteJob", "glue:StartJobRun",
                             "glue:BatchStopJobRun", "glue:UpdateJob", "glue:CreateJob",
                             "glue:TagResource"}) {
    Status st = authorizer.Authorize("OGRUN1", denied);
    EXPECT_EQ(st.code(), StatusCode::kAccessDenied) << denied;
    EXPECT_NE(st.message().find(denied), std::string::npos) << st.message();
  }
  authorizer.AddRun("OGRUN2", {"job", "jr_2", "Narrow"});
  EXPECT_TRUE(authorizer.Authorize("OGRUN2", "glue:GetTable").ok());
  EXPECT_FALSE(authorizer.Authorize("OGRUN2", "glue:CreateTable").ok());
  authorizer.AddRun("OGRUN3", {"job", "jr_3", "Wide"});
  EXPECT_TRUE(authorizer.Authorize("OGRUN3", "glue:DeleteDatabase").ok());
  EXPECT_FALSE(authorizer.Authorize("OGRUN3", "logs:GetLogEvents").ok());
  authorizer.RemoveRun("OGRUN1");
  EXPECT_FALSE(authorizer.Authorize("OGRUN1", "glue:GetTable").ok());
}

TEST(RolePolicyConfig, ParsesRepeatedLinesAndRefusesNonsense) {
  ServerConfig config;
  ASSERT_TRUE(config.Set("role_policy", "MyRole: glue:Get*, glue:BatchGetPartition").ok());
  ASSERT_TRUE(config.Set("role_policy", "MyRole: logs:*").ok());
  ASSERT_EQ(config.role_policies["MyRole"].size(), 3u);
  EXPECT_EQ(config.role_policies["MyRole"][2], "logs:*");
  EXPECT_FALSE(config.Set("role_policy", "MyRole").ok());
  EXPECT_FALSE(config.Set("role_policy", "MyRole: GetTable").ok());
  EXPECT_FALSE(config.Set("role_policy", ": glue:GetTable").ok());
  EXPECT_FALSE(config.Set("role_policy", "MyRole: ").ok());
}

TEST(RunSecrets, DerivedFromTheKeyNeverStored) {
  SeededRandom random(7);
  std::string dir = ::testing::TempDir() + "/run_secrets_" + std::to_string(::getpid());
  std::string cmd = "rm -rf " + dir + " && mkdir -p " + dir;
  ASSERT_EQ(std::system(cmd.c_str()), 0);
  auto first = RunSecrets::Make(dir + "/server.key", "", &random);
  ASSERT_TRUE(first.ok()) << first.status().message();
  auto again = RunSecrets::Make(dir + "/server.key", "", &random);  // a restart: same key
  ASSERT_TRUE(again.ok());
  std::string secret = first->SecretFor("OGRUNabc");
  EXPECT_EQ(secret.size(), 40u);
  EXPECT_EQ(secret, again->SecretFor("OGRUNabc"));
  EXPECT_NE(secret, first->SecretFor("OGRUNabd"));
  auto other = RunSecrets::Make(dir + "/other.key", std::string(32, 'k'), &random);
  ASSERT_TRUE(other.ok());
  EXPECT_NE(other->SecretFor("OGRUNabc"), secret);
}

}  // namespace
}  // namespace openglue::api
