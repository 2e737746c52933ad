// Router: the registration paths the bookmark operations use. A handler registered with the
// principal receives it; an extension operation (not in the model) is not validated against the
// model but must have an object body and is authorized like any other; model operations stay
// validated.
#include "api/router.h"

#include <gtest/gtest.h>

#include "api/bookmark_operations.h"

namespace openglue::api {
namespace {

class RouterRegistrationTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto made = ServiceModel::MakeEmbedded();
    ASSERT_TRUE(made.ok()) << made.status().ToString();
    model_ = std::move(*made);
    router_ = std::make_unique<Router>(model_.get());
  }
  Json Body(const WireResponse& response) { return Json::parse(response.body); }

  std::unique_ptr<ServiceModel> model_;
  std::unique_ptr<Router> router_;
};

TEST_F(RouterRegistrationTest, ExtensionGetsPrincipalAndSkipsTheModel) {
  std::string seen_principal;
  Json seen_request;
  router_->RegisterExtension("OpenGlueThing", [&](const Json& request, const std::string& who) {
    seen_principal = who;
    seen_request = request;
    return Result<Json>(Json{{"Ok", true}});
  });
  WireResponse ok = router_->Handle("AWSGlue.OpenGlueThing", R"({"Anything": [1], "Gone": null})",
                                    "AKRUN");
  EXPECT_EQ(ok.http_status, 200) << ok.body;
  EXPECT_EQ(seen_principal, "AKRUN");
  EXPECT_EQ(seen_request, Json::parse(R"({"Anything": [1]})"));  // nulls are absent
  WireResponse array = router_->Handle("AWSGlue.OpenGlueThing", "[1]", "AKRUN");
  EXPECT_EQ(array.http_status, 400);
  EXPECT_EQ(Body(array)["__type"], "SerializationException");
  EXPECT_EQ(router_->ExtensionOperations(), std::vector<std::string>{"OpenGlueThing"});
  EXPECT_FALSE(router_->Implements("GetJobBookmark"));

  // Authorized like every operation, under glue:<name>.
  std::string asked;
  router_->SetAuthorizer([&](const std::string&, const std::string& action) {
    asked = action;
    return Status(StatusCode::kAccessDenied, "no");
  });
  WireResponse denied = router_->Handle("AWSGlue.OpenGlueThing", "{}", "AKRUN");
  EXPECT_EQ(Body(denied)["__type"], "AccessDeniedException");
  EXPECT_EQ(asked, "glue:OpenGlueThing");
}

TEST_F(RouterRegistrationTest, ModelOperationWithPrincipalIsStillValidated) {
  int calls = 0;
  router_->RegisterGlueWithPrincipal("GetJobBookmark", [&](const Json&, const std::string& who) {
    ++calls;
    return Result<Json>(Json{{"JobBookmarkEntry", {{"JobName", who}}}});
  });
  WireResponse missing = router_->Handle("AWSGlue.GetJobBookmark", "{}", "p");
  EXPECT_EQ(missing.http_status, 400);
  EXPECT_EQ(Body(missing)["__type"], "ValidationException") << missing.body;
  WireResponse wrong = router_->Handle("AWSGlue.GetJobBookmark", R"({"JobName": 5})", "p");
  EXPECT_EQ(Body(wrong)["__type"], "SerializationException") << wrong.body;
  EXPECT_EQ(calls, 0);
  WireResponse ok = router_->Handle("AWSGlue.GetJobBookmark", R"({"JobName": "j"})", "p");
  EXPECT_EQ(ok.http_status, 200);
  EXPECT_EQ(Body(ok)["JobBookmarkEntry"]["JobName"], "p");
  EXPECT_TRUE(router_->Implements("GetJobBookmark"));
  // Plain handlers keep working as before.
  router_->RegisterGlue("GetJob", [](const Json& request) { return Result<Json>(request); });
  EXPECT_EQ(router_->Handle("AWSGlue.GetJob", R"({"JobName": "x"})").http_status, 200);
}

TEST(BookmarkCaller, MapsPrincipals) {
  RunAuthorizer authorizer({"admin"}, {});
  authorizer.AddRun("AKRUN", {"orders", "jr_1", "role"});
  EXPECT_EQ(BookmarkCaller(&authorizer, "").kind, bookmarks::Caller::Kind::kAnonymous);
  EXPECT_EQ(BookmarkCaller(&authorizer, "admin").kind, bookmarks::Caller::Kind::kAdministrator);
  bookmarks::Caller run = BookmarkCaller(&authorizer, "AKRUN");
  EXPECT_EQ(run.kind, bookmarks::Caller::Kind::kRun);
  EXPECT_EQ(run.job, "orders");
  EXPECT_EQ(run.run_id, "jr_1");
  EXPECT_EQ(BookmarkCaller(nullptr, "AKRUN").kind, bookmarks::Caller::Kind::kAdministrator);
  // Once the run has ended its credential is nobody's run.
  authorizer.RemoveRun("AKRUN");
  EXPECT_NE(BookmarkCaller(&authorizer, "AKRUN").kind, bookmarks::Caller::Kind::kRun);
}

}  // namespace
}  // namespace openglue::api
