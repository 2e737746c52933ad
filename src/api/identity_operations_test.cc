// iam:GetRole and sts:GetCallerIdentity through the Router's query protocol: the XML a boto3
// client parses, the query-protocol errors, the authorizer, and the Role ARN a job may carry
// standing for the Role's name (end to end: tests/test_identity_api.py).
#include "api/identity_operations.h"

#include <gtest/gtest.h>

#include "api/query_protocol.h"

namespace openglue::api {
namespace {

class IdentityTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto made = ServiceModel::MakeEmbedded();
    ASSERT_TRUE(made.ok()) << made.status().ToString();
    model_ = std::move(*made);
    router_ = std::make_unique<Router>(model_.get());
    IdentityOptions options;
    options.account_id = "123456789012";
    options.created_millis = 1700000000000;  // 2023-11-14T22:13:20Z
    options.configured_roles = {"etl-writer"};
    options.authorizer = &authorizer_;
    RegisterIdentity(router_.get(), options);
    router_->SetAuthorizer([this](const std::string& principal, const std::string& action) {
      return authorizer_.Authorize(principal, action);
    });
  }
  static bool Has(const WireResponse& response, const std::string& text) {
    return response.body.find(text) != std::string::npos;
  }

  RunAuthorizer authorizer_{{"admin"}, {{"etl-writer", {"glue:*"}}}};
  std::unique_ptr<ServiceModel> model_;
  std::unique_ptr<Router> router_;
};

TEST_F(IdentityTest, GetRoleNamesTheRoleArn) {
  WireResponse out = router_->HandleQuery("Action=GetRole&Version=2010-05-08&RoleName=etl-writer",
                                          "admin");
  ASSERT_EQ(out.http_status, 200) << out.body;
  EXPECT_EQ(out.content_type, "text/xml");
  EXPECT_TRUE(Has(out, "<GetRoleResponse xmlns=\"https://iam.amazonaws.com/doc/2010-05-08/\">"
                       "<GetRoleResult><Role><Path>/</Path><RoleName>etl-writer</RoleName>"))
      << out.body;
  EXPECT_TRUE(Has(out, "<Arn>arn:aws:iam::123456789012:role/etl-writer</Arn>")) << out.body;
  EXPECT_TRUE(Has(out, "<CreateDate>2023-11-14T22:13:20Z</CreateDate>")) << out.body;
  EXPECT_TRUE(Has(out, "its role_policy lines allow")) << out.body;
  // The trust policy is percent-encoded JSON, as IAM sends it.
  EXPECT_TRUE(Has(out, "<AssumeRolePolicyDocument>%7B%22Version%22%3A%222012-10-17%22")) << out.body;
  // A stable id in IAM's form.
  size_t id = out.body.find("<RoleId>AROA");
  ASSERT_NE(id, std::string::npos);
  EXPECT_EQ(out.body.substr(id + 8 + 21, 9), "</RoleId>");
  WireResponse again = router_->HandleQuery("Action=GetRole&Version=2010-05-08&RoleName=etl-writer",
                                            "admin");
  EXPECT_EQ(again.body, out.body);

  WireResponse plain = router_->HandleQuery("Action=GetRole&Version=2010-05-08&RoleName=local",
                                            "admin");
  EXPECT_TRUE(Has(plain, "the default run policy allows")) << plain.body;
}

TEST_F(IdentityTest, QueryProtocolErrors) {
  WireResponse bad = router_->HandleQuery("Action=GetRole&Version=2010-05-08&RoleName=a%2Fb", "admin");
  EXPECT_EQ(bad.http_status, 400);
  EXPECT_TRUE(Has(bad, "<ErrorResponse xmlns=\"https://iam.amazonaws.com/doc/2010-05-08/\">"
                       "<Error><Type>Sender</Type><Code>ValidationError</Code>"))
      << bad.body;
  EXPECT_TRUE(Has(bad, "roleName is invalid")) << bad.body;
  WireResponse none = router_->HandleQuery("Action=GetRole&Version=2010-05-08", "admin");
  EXPECT_TRUE(Has(none, "<Code>ValidationError</Code>")) << none.body;
  WireResponse missing = router_->HandleQuery("Version=2010-05-08", "admin");
  EXPECT_EQ(missing.http_status, 400);
  EXPECT_TRUE(Has(missing, "<Code>MissingAction</Code>")) << missing.body;
  WireResponse unknown = router_->HandleQuery("Action=CreateRole&Version=2010-05-08", "admin");
  EXPECT_TRUE(Has(unknown, "<Code>InvalidAction</Code>")) << unknown.body;
  EXPECT_TRUE(Has(unknown, "Could not find operation CreateRole for version 2010-05-08")) << unknown.body;
  WireResponse version = router_->HandleQuery("Action=GetRole&Version=2011-06-15&RoleName=x", "admin");
  EXPECT_TRUE(Has(version, "<Code>InvalidAction</Code>")) << version.body;
  // A client-chosen value in a message is escaped.
  WireResponse escaped = router_->HandleQuery("Action=%3Cx%3E&Version=1", "admin");
  EXPECT_TRUE(Has(escaped, "operation &lt;x&gt; for version 1")) << escaped.body;
}

TEST_F(IdentityTest, RunsMayNotGetRolesButKnowWhoTheyAre) {
  authorizer_.AddRun("OGRUN1", {"orders", "jr_1", "arn:aws:iam::123456789012:role/etl/reader"});
  WireResponse denied = router_->HandleQuery("Action=GetRole&Version=2010-05-08&RoleName=x", "OGRUN1");
  EXPECT_EQ(denied.http_status, 403);
  EXPECT_TRUE(Has(denied, "<Code>AccessDenied</Code>")) << denied.body;
  EXPECT_TRUE(Has(denied, "iam:GetRole")) << denied.body;

  WireResponse run = router_->HandleQuery("Action=GetCallerIdentity&Version=2011-06-15", "OGRUN1");
  ASSERT_EQ(run.http_status, 200) << run.body;
  EXPECT_TRUE(Has(run, "<GetCallerIdentityResponse xmlns=\"https://sts.amazonaws.com/doc/2011-06-15/\">"
                       "<GetCallerIdentityResult><Arn>arn:aws:sts::123456789012:assumed-role/reader/jr_1</Arn>"))
      << run.body;
  EXPECT_TRUE(Has(run, "<Account>123456789012</Account>")) << run.body;
  WireResponse admin = router_->HandleQuery("Action=GetCallerIdentity&Version=2011-06-15", "admin");
  EXPECT_TRUE(Has(admin, "<Arn>arn:aws:iam::123456789012:root</Arn><UserId>123456789012</UserId>"))
      << admin.body;
}

TEST(QueryProtocol, FormsAndContentTypes) {
  auto fields = ParseQueryForm("Action=GetRole&RoleName=a+b%2Bc&Empty=&Flag&Action=Last");
  ASSERT_TRUE(fields.ok());
  EXPECT_EQ(fields->at("Action"), "Last");
  EXPECT_EQ(fields->at("RoleName"), "a b+c");
  EXPECT_EQ(fields->at("Empty"), "");
  EXPECT_EQ(fields->at("Flag"), "");
  EXPECT_FALSE(ParseQueryForm("Name=%FF%FE").ok());
  EXPECT_TRUE(IsFormContentType("application/x-www-form-urlencoded; charset=utf-8"));
  EXPECT_TRUE(IsFormContentType("Application/X-WWW-Form-URLEncoded"));
  EXPECT_FALSE(IsFormContentType("application/x-amz-json-1.1"));
  EXPECT_EQ(XmlEscape("a<b>&\"'\x01"), "a&lt;b&gt;&amp;&quot;&apos;\xEF\xBF\xBD");
  EXPECT_EQ(PercentEncode("{\"a\":1} ~"), "%7B%22a%22%3A1%7D%20~");
}

TEST(RoleNameOf, AnIamRoleArnStandsForItsName) {
  EXPECT_EQ(RoleNameOf("local"), "local");
  EXPECT_EQ(RoleNameOf("arn:aws:iam::000000000000:role/etl-writer"), "etl-writer");
  EXPECT_EQ(RoleNameOf("arn:aws:iam::000000000000:role/service-role/team/etl"), "etl");
  EXPECT_EQ(RoleNameOf("arn:aws-cn:iam::1:role/x"), "x");
  // Not an IAM role ARN: the string itself.
  EXPECT_EQ(RoleNameOf("arn:aws:iam::1:user/x"), "arn:aws:iam::1:user/x");
  EXPECT_EQ(RoleNameOf("arn:aws:s3:::role/x"), "arn:aws:s3:::role/x");
  EXPECT_EQ(RoleNameOf("arn:aws:iam::1:role/"), "arn:aws:iam::1:role/");
  RunAuthorizer authorizer({}, {{"etl-writer", {"glue:GetTable"}}});
  EXPECT_EQ(authorizer.PolicyFor("arn:aws:iam::000000000000:role/etl-writer"),
            std::vector<std::string>{"glue:GetTable"});
  EXPECT_EQ(&authorizer.PolicyFor("arn:aws:iam::000000000000:role/other"), &DefaultRunPolicy());
}

}  // namespace
}  // namespace openglue::api
