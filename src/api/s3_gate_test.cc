#include "api/s3_gate.h"

#include <gtest/gtest.h>

#include "common/config.h"

namespace openglue::api {
namespace {

HttpRequestHead Head(const std::string& text) {
  HttpRequestHead head;
  HttpParseError error;
  HttpLimits limits;
  limits.max_body_bytes = ~0ull;
  EXPECT_EQ(ParseRequestHead(text, limits, &head, &error), ParseResult::kComplete) << error.message;
  return head;
}

std::string Signed(const std::string& line, const std::string& extra = "") {
  return line + " HTTP/1.1\r\nHost: s3\r\nAuthorization: AWS4-HMAC-SHA256 Credential=OGRUN1/20261202/us-east-1/s3/aws4_request, SignedHeaders=host, Signature=00\r\n" +
         extra + "\r\n";
}

std::vector<std::string> Actions(const S3Access& access) {
  std::vector<std::string> out;
  for (const S3Check& c : access.checks) out.push_back(c.action + " " + c.bucket + "/" + c.key);
  return out;
}

TEST(DescribeS3Request, NamesTheActionsAndResourcesAsIamDoes) {
  auto get = DescribeS3Request(Head(Signed("GET /lake/a%20b.csv")));
  ASSERT_TRUE(get.ok()) << get.status().message();
  EXPECT_EQ(get->principal, "OGRUN1");
  EXPECT_EQ(Actions(*get), std::vector<std::string>{"s3:GetObject lake/a b.csv"});
  // The path is decoded before it is split, as versitygw does: %2F is a '/'.
  auto escaped = DescribeS3Request(Head(Signed("PUT /scripts%2Fjob.py")));
  ASSERT_TRUE(escaped.ok());
  EXPECT_EQ(Actions(*escaped), std::vector<std::string>{"s3:PutObject scripts/job.py"});
  auto copy = DescribeS3Request(Head(Signed("PUT /scripts/job.py", "x-amz-copy-source: /lake/evil.py%3FversionId%3D1\r\n")));
  ASSERT_TRUE(copy.ok());
  EXPECT_EQ(Actions(*copy), (std::vector<std::string>{"s3:PutObject scripts/job.py", "s3:GetObject lake/evil.py"}));
  auto list = DescribeS3Request(Head(Signed("GET /lake?list-type=2&prefix=a")));
  EXPECT_EQ(Actions(*list), std::vector<std::string>{"s3:ListBucket lake/"});
  auto policy = DescribeS3Request(Head(Signed("PUT /lake?policy")));
  EXPECT_EQ(Actions(*policy), std::vector<std::string>{"s3:PutBucketPolicy lake/"});
  auto abort = DescribeS3Request(Head(Signed("DELETE /lake/k?uploadId=1")));
  EXPECT_EQ(Actions(*abort), std::vector<std::string>{"s3:AbortMultipartUpload lake/k"});
  auto buckets = DescribeS3Request(Head(Signed("GET /")));
  EXPECT_EQ(Actions(*buckets), std::vector<std::string>{"s3:ListAllMyBuckets /"});
  auto deletes = DescribeS3Request(Head(Signed("POST /lake?delete", "Content-Length: 10\r\n")));
  ASSERT_TRUE(deletes.ok());
  EXPECT_TRUE(deletes->deletes_listed_keys);
  // A presigned URL's credential is the principal.
  auto presigned = DescribeS3Request(Head(
      "PUT /lake/k?X-Amz-Algorithm=AWS4-HMAC-SHA256&X-Amz-Credential=OGRUN2%2F20261202%2Fus-east-1%2Fs3%2Faws4_request&X-Amz-Signature=00 HTTP/1.1\r\nHost: s3\r\n\r\n"));
  ASSERT_TRUE(presigned.ok());
  EXPECT_EQ(presigned->principal, "OGRUN2");
}

TEST(DescribeS3Request, RefusesWhatItCannotReadTheWayVersitygwDoes) {
  EXPECT_FALSE(DescribeS3Request(Head(Signed("GET /lake/k", "Authorization: AWS4-HMAC-SHA256 Credential=OTHER/x\r\n"))).ok());
  EXPECT_FALSE(DescribeS3Request(Head(Signed("GET /lake/k?X-Amz-Credential=OGRUN2%2Fx"))).ok());
  EXPECT_FALSE(DescribeS3Request(Head("GET /lake/k HTTP/1.1\r\nHost: s3\r\nAuthorization: Bearer x\r\n\r\n")).ok());
  EXPECT_FALSE(DescribeS3Request(Head("GET /lake/k?X-Amz-Signature=00 HTTP/1.1\r\nHost: s3\r\n\r\n")).ok());
  EXPECT_FALSE(DescribeS3Request(Head(Signed("GET /lake/%zz"))).ok());
  EXPECT_FALSE(DescribeS3Request(Head(Signed("POST /lake", "Content-Type: multipart/form-data\r\n"))).ok());
  // Unsigned requests go on as anonymous (versitygw refuses what is not public).
  auto anonymous = DescribeS3Request(Head("GET /lake/k HTTP/1.1\r\nHost: s3\r\n\r\n"));
  ASSERT_TRUE(anonymous.ok());
  EXPECT_EQ(anonymous->principal, "");
}

TEST(CheckRunRequest, RefusesKeysThatAreNotOneObject) {
  for (const char* path : {"/b/./k", "/b//k", "/b/a/../k", "/b/%2e%2e/k", "/b/%2Fk"}) {
    HttpRequestHead head = Head(Signed(std::string("PUT ") + path));
    auto access = DescribeS3Request(head);
    ASSERT_TRUE(access.ok()) << path;
    EXPECT_FALSE(CheckRunRequest(head, *access).ok()) << path;
  }
  for (const char* fine : {"PUT /b/a/folder/", "GET /b/?list-type=2&prefix=in/", "GET /b", "GET /"}) {
    HttpRequestHead head = Head(Signed(fine));
    EXPECT_TRUE(CheckRunRequest(head, *DescribeS3Request(head)).ok()) << fine;
  }
}

TEST(DeleteObjectKeys, ReadsPlainXmlAndRefusesTheRest) {
  auto keys = DeleteObjectKeys(
      "<?xml version=\"1.0\" encoding=\"UTF-8\"?><Delete xmlns=\"http://s3.amazonaws.com/doc/2006-03-01/\">"
      "<Object><Key>a&amp;b</Key></Object><Object><Key>scripts/&#106;ob.py</Key><VersionId>1</VersionId></Object>"
      "<Quiet>true</Quiet></Delete>");
  ASSERT_TRUE(keys.ok()) << keys.status().message();
  EXPECT_EQ(*keys, (std::vector<std::string>{"a&b", "scripts/job.py"}));
  EXPECT_FALSE(DeleteObjectKeys("<Delete><Object><Key><![CDATA[job.py]]></Key></Object></Delete>").ok());
  EXPECT_FALSE(DeleteObjectKeys("<Delete><Object><s3:Key>job.py</s3:Key></Object></Delete>").ok());
  EXPECT_FALSE(DeleteObjectKeys("<Delete><!-- x --><Object><Key>job.py</Key></Object></Delete>").ok());
  EXPECT_FALSE(DeleteObjectKeys("<Delete><Object><Key>&unknown;</Key></Object></Delete>").ok());
  EXPECT_FALSE(DeleteObjectKeys("<!DOCTYPE d [<!ENTITY e \"job.py\">]><Delete/>").ok());
}

TEST(AuthorizeS3Access, HoldsRunsToTheirRoleAndNeverToJobsCode) {
  ServerConfig config;
  ASSERT_TRUE(config.Set("role_policy", "reader: s3:GetObject arn:aws:s3:::lake/*, s3:ListBucket s3://lake").ok());
  ASSERT_TRUE(config.Set("role_policy", "writer: s3:*").ok());
  RunAuthorizer authorizer({"ADMIN"}, config.role_policies);
  authorizer.AddRun("R1", {"j1", "jr_1", "reader"});
  authorizer.AddRun("W1", {"j2", "jr_2", "writer"});
  authorizer.AddRun("D1", {"j3", "jr_3", "default-role"});
  int lookups = 0;
  CodeObjects code = [&lookups]() -> Result<std::map<std::string, std::string>> {
    ++lookups;
    return std::map<std::string, std::string>{{"scripts/victim.py", "victim"}, {"libs/shared/", "etl"}};
  };
  auto access = [](std::string principal, std::vector<S3Check> checks) {
    S3Access a;
    a.principal = std::move(principal);
    a.checks = std::move(checks);
    return a;
  };
  EXPECT_TRUE(AuthorizeS3Access(authorizer, access("R1", {{"s3:GetObject", "lake", "a.csv"}}), code).ok());
  Status denied = AuthorizeS3Access(authorizer, access("R1", {{"s3:PutObject", "lake", "a.csv"}}), code);
  EXPECT_EQ(denied.code(), StatusCode::kAccessDenied);
  EXPECT_NE(denied.message().find("s3:PutObject on resource: arn:aws:s3:::lake/a.csv"), std::string::npos) << denied.message();
  EXPECT_FALSE(AuthorizeS3Access(authorizer, access("R1", {{"s3:GetObject", "lakehouse", "a.csv"}}), code).ok());
  EXPECT_TRUE(AuthorizeS3Access(authorizer, access("R1", {{"s3:ListBucket", "lake", ""}}), code).ok());
  EXPECT_EQ(lookups, 0);  // reads never ask for the code list
  // s3:* still cannot write a job's code, or anything in a code folder.
  Status code_write = AuthorizeS3Access(authorizer, access("W1", {{"s3:PutObject", "scripts", "victim.py"}}), code);
  EXPECT_EQ(code_write.code(), StatusCode::kAccessDenied);
  EXPECT_NE(code_write.message().find("code of job victim"), std::string::npos);
  EXPECT_FALSE(AuthorizeS3Access(authorizer, access("W1", {{"s3:DeleteObject", "libs", "shared/a.py"}}), code).ok());
  EXPECT_TRUE(AuthorizeS3Access(authorizer, access("W1", {{"s3:PutObject", "scripts", "victim.py.bak"}}), code).ok());
  EXPECT_TRUE(AuthorizeS3Access(authorizer, access("W1", {{"s3:PutBucketPolicy", "lake", ""}}), code).ok());
  // The default Role: objects yes, bucket configuration and deletion no.
  EXPECT_TRUE(AuthorizeS3Access(authorizer, access("D1", {{"s3:PutObject", "lake", "x"}}), code).ok());
  EXPECT_FALSE(AuthorizeS3Access(authorizer, access("D1", {{"s3:DeleteBucket", "lake", ""}}), code).ok());
  EXPECT_FALSE(AuthorizeS3Access(authorizer, access("D1", {{"s3:PutBucketPolicy", "lake", ""}}), code).ok());
  // Operators, unknown keys (versitygw refuses them) and unsigned requests are not the gate's.
  EXPECT_TRUE(AuthorizeS3Access(authorizer, access("ADMIN", {{"s3:PutObject", "scripts", "victim.py"}}), code).ok());
  EXPECT_TRUE(AuthorizeS3Access(authorizer, access("", {{"s3:PutObject", "scripts", "victim.py"}}), code).ok());
  // What a run may not send at all.
  S3Access refused = access("W1", {{"s3:GetObject", "lake", "a"}});
  refused.refused_to_runs = "object keys with empty segments";
  EXPECT_EQ(AuthorizeS3Access(authorizer, refused, code).code(), StatusCode::kInvalidInput);
}

TEST(StoreGrantsOf, FolderGrantsFromPolicyStatements) {
  jobs::StoreGrants all = StoreGrantsOf(DefaultRunPolicy());
  EXPECT_TRUE(all.read_all);
  EXPECT_TRUE(all.write_all);
  jobs::StoreGrants some = StoreGrantsOf({"glue:Get*", "s3:GetObject arn:aws:s3:::lake/*",
                                          "s3:GetObject s3://ref/table.csv", "s3:PutObject s3://lake/out/*",
                                          "s3:PutObject s3://lake/a*.csv", "s3:GetObject arn:aws:s3:::x/*/y"});
  EXPECT_FALSE(some.read_all);
  EXPECT_FALSE(some.write_all);
  EXPECT_EQ(some.read_folders, (std::vector<std::string>{"lake"}));
  EXPECT_EQ(some.read_objects, (std::vector<std::string>{"ref/table.csv"}));
  EXPECT_EQ(some.write_folders, (std::vector<std::string>{"lake/out"}));
}

TEST(RolePolicyConfig, S3StatementsNameResources) {
  ServerConfig config;
  EXPECT_TRUE(config.Set("role_policy", "R: s3:GetObject arn:aws:s3:::lake/* s3://other/*").ok());
  EXPECT_FALSE(config.Set("role_policy", "R: glue:GetTable arn:aws:glue:::table/x").ok());
  EXPECT_FALSE(config.Set("role_policy", "R: s3:GetObject lake/*").ok());
  PolicyStatement statement = ParseStatement("s3:GetObject arn:aws:s3:::lake/*  s3://other/*");
  EXPECT_EQ(statement.action, "s3:GetObject");
  EXPECT_EQ(statement.resources, (std::vector<std::string>{"arn:aws:s3:::lake/*", "arn:aws:s3:::other/*"}));
  EXPECT_TRUE(ResourceMatches("arn:aws:s3:::lake/*", "arn:aws:s3:::lake/a/b.csv"));
  EXPECT_FALSE(ResourceMatches("arn:aws:s3:::lake/*", "arn:aws:s3:::Lake/a"));  // ARNs are case-sensitive
}

}  // namespace
}  // namespace openglue::api
