#include "api/http_parser.h"

#include <gtest/gtest.h>

#include <string>

namespace openglue::api {
namespace {

struct Parsed {
  ParseResult result;
  HttpRequest request;
  size_t consumed = 0;
  HttpParseError error;
};

Parsed Parse(std::string_view bytes, HttpLimits limits = {}) {
  Parsed p;
  p.result = ParseRequest(bytes, limits, &p.request, &p.consumed, &p.error);
  return p;
}

constexpr std::string_view kPost =
    "POST / HTTP/1.1\r\nHost: h\r\nX-Amz-Target: AWSGlue.GetDatabases\r\n"
    "Content-Length: 2\r\n\r\n{}";

TEST(HttpParserTest, ParsesAPostWithItsHeadersAndBody) {
  Parsed p = Parse(kPost);
  ASSERT_EQ(p.result, ParseResult::kComplete);
  EXPECT_EQ(p.request.head.method, "POST");
  EXPECT_EQ(p.request.head.target, "/");
  EXPECT_EQ(p.request.head.minor_version, 1);
  EXPECT_EQ(p.request.head.Header("x-amz-target").value_or(""), "AWSGlue.GetDatabases");
  EXPECT_EQ(p.request.body, "{}");
  EXPECT_EQ(p.consumed, kPost.size());
  EXPECT_TRUE(p.request.head.keep_alive);
}

TEST(HttpParserTest, EveryPrefixIsIncomplete) {
  for (size_t n = 0; n < kPost.size(); ++n) {
    Parsed p = Parse(kPost.substr(0, n));
    EXPECT_EQ(p.result, ParseResult::kIncomplete) << n;
  }
}

TEST(HttpParserTest, PipelinedRequestsParseOneAfterAnother) {
  std::string three = std::string(kPost) + std::string(kPost) + std::string(kPost);
  std::string_view rest = three;
  for (int i = 0; i < 3; ++i) {
    Parsed p = Parse(rest);
    ASSERT_EQ(p.result, ParseResult::kComplete) << i;
    EXPECT_EQ(p.request.body, "{}");
    rest.remove_prefix(p.consumed);
  }
  EXPECT_TRUE(rest.empty());
}

TEST(HttpParserTest, PathAndQuery) {
  Parsed p = Parse("GET /health?x=1&y HTTP/1.1\r\n\r\n");
  ASSERT_EQ(p.result, ParseResult::kComplete);
  EXPECT_EQ(p.request.head.path(), "/health");
  EXPECT_EQ(p.request.head.query(), "x=1&y");
}

TEST(HttpParserTest, Http10ClosesUnlessKeepAlive) {
  Parsed p = Parse("GET / HTTP/1.0\r\n\r\n");
  ASSERT_EQ(p.result, ParseResult::kComplete);
  EXPECT_FALSE(p.request.head.keep_alive);
  p = Parse("GET / HTTP/1.0\r\nConnection: keep-alive\r\n\r\n");
  EXPECT_TRUE(p.request.head.keep_alive);
  p = Parse("GET / HTTP/1.1\r\nConnection: close\r\n\r\n");
  EXPECT_FALSE(p.request.head.keep_alive);
}

TEST(HttpParserTest, BareLineFeedsAndLeadingBlankLinesAreAccepted) {
  Parsed p = Parse("\r\n\r\nPOST / HTTP/1.1\nContent-Length: 1\n\nx");
  ASSERT_EQ(p.result, ParseResult::kComplete);
  EXPECT_EQ(p.request.body, "x");
}

TEST(HttpParserTest, ChunkedBody) {
  Parsed p = Parse(
      "POST / HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n"
      "4\r\n{\"a\"\r\n3;ext=1\r\n:1}\r\n0\r\nTrailer: x\r\n\r\nNEXT");
  ASSERT_EQ(p.result, ParseResult::kComplete) << p.error.message;
  EXPECT_EQ(p.request.body, "{\"a\":1}");
  EXPECT_TRUE(p.request.head.chunked);
  EXPECT_EQ(p.consumed, p.request.head.head_bytes + 40);
}

TEST(HttpParserTest, ChunkedDecoderTakesBytesOneAtATime) {
  std::string body = "5\r\nhello\r\n6\r\n world\r\n0\r\n\r\n";
  ChunkedDecoder decoder(1000);
  std::string out;
  HttpParseError error;
  std::string pending;
  ParseResult r = ParseResult::kIncomplete;
  for (char c : body) {
    pending.push_back(c);
    size_t used = 0;
    r = decoder.Decode(pending, &used, &out, &error);
    ASSERT_NE(r, ParseResult::kError) << error.message;
    pending.erase(0, used);
  }
  EXPECT_EQ(r, ParseResult::kComplete);
  EXPECT_EQ(out, "hello world");
}

struct Refusal {
  const char* name;
  std::string bytes;
  int status;
};

class HttpParserRefusalTest : public ::testing::TestWithParam<Refusal> {};

TEST_P(HttpParserRefusalTest, IsRefusedWithItsStatus) {
  HttpLimits limits;
  limits.max_body_bytes = 1000;
  limits.max_head_bytes = 4096;
  limits.max_headers = 10;
  Parsed p = Parse(GetParam().bytes, limits);
  ASSERT_EQ(p.result, ParseResult::kError);
  EXPECT_EQ(p.error.status, GetParam().status) << p.error.message;
  EXPECT_FALSE(p.error.message.empty());
}

const Refusal kRefusals[] = {
    {"ConflictingContentLength",
     "POST / HTTP/1.1\r\nContent-Length: 2\r\nContent-Length: 3\r\n\r\n{}x", 400},
    {"ConflictingContentLengthList", "POST / HTTP/1.1\r\nContent-Length: 2, 3\r\n\r\n{}x", 400},
    {"ContentLengthAndTransferEncoding",
     "POST / HTTP/1.1\r\nContent-Length: 2\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n", 400},
    {"NegativeContentLength", "POST / HTTP/1.1\r\nContent-Length: -1\r\n\r\n", 400},
    {"HexContentLength", "POST / HTTP/1.1\r\nContent-Length: 0x10\r\n\r\n", 400},
    {"HugeContentLength", "POST / HTTP/1.1\r\nContent-Length: 99999999999999999999999\r\n\r\n", 413},
    {"BodyOverLimit", "POST / HTTP/1.1\r\nContent-Length: 1001\r\n\r\n", 413},
    {"ChunkedOverLimit", "POST / HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n3ea\r\n", 413},
    {"ChunkSizeOverflow",
     "POST / HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\nffffffffffffffffffff\r\n", 400},
    {"BadChunkSize", "POST / HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n", 400},
    {"MissingChunkCrlf", "POST / HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n1\r\nab\r\n", 400},
    {"OtherTransferCoding", "POST / HTTP/1.1\r\nTransfer-Encoding: gzip\r\n\r\n", 501},
    {"ChunkedNotLast", "POST / HTTP/1.1\r\nTransfer-Encoding: chunked, gzip\r\n\r\n", 501},
    {"Http2Version", "POST / HTTP/2.0\r\n\r\n", 505},
    {"GarbageVersion", "POST / HTTX/1.1\r\n\r\n", 400},
    {"NoTarget", "POST HTTP/1.1\r\n\r\n", 400},
    {"ExtraSpace", "POST  / HTTP/1.1\r\n\r\n", 400},
    {"HeaderWithoutColon", "POST / HTTP/1.1\r\nHost h\r\n\r\n", 400},
    {"SpaceBeforeColon", "POST / HTTP/1.1\r\nHost : h\r\n\r\n", 400},
    {"FoldedHeader", "POST / HTTP/1.1\r\nX-A: a\r\n b\r\n\r\n", 400},
    {"NulInHeader", std::string("POST / HTTP/1.1\r\nX-A: a\0b\r\n\r\n", 29), 400},
    {"ControlInTarget", "POST /\x01 HTTP/1.1\r\n\r\n", 400},
    {"TooManyHeaders",
     "POST / HTTP/1.1\r\n" + [] {
       std::string h;
       for (int i = 0; i < 11; ++i) h += "X-" + std::to_string(i) + ": v\r\n";
       return h;
     }() + "\r\n",
     431},
    {"HeadTooLong", "POST / HTTP/1.1\r\nX-A: " + std::string(5000, 'a'), 431},
    {"HeadTooLongComplete", "POST / HTTP/1.1\r\nX-A: " + std::string(5000, 'a') + "\r\n\r\n", 431},
    {"BadExpect", "POST / HTTP/1.1\r\nExpect: something\r\n\r\n", 417},
};

INSTANTIATE_TEST_SUITE_P(Refusals, HttpParserRefusalTest, ::testing::ValuesIn(kRefusals),
                         [](const auto& info) { return std::string(info.param.name); });

TEST(HttpParserTest, RepeatedEqualContentLengthIsOneLength) {
  Parsed p = Parse("POST / HTTP/1.1\r\nContent-Length: 2\r\nContent-Length: 2\r\n\r\n{}");
  ASSERT_EQ(p.result, ParseResult::kComplete);
  EXPECT_EQ(p.request.body, "{}");
}

TEST(HttpParserTest, ObsTextInHeaderValuesIsKept) {
  Parsed p = Parse("POST / HTTP/1.1\r\nX-Amz-Target: AWSGlue.\xff\xfe\r\n\r\n");
  ASSERT_EQ(p.result, ParseResult::kComplete);
  EXPECT_EQ(p.request.head.Header("X-AMZ-TARGET").value_or(""), "AWSGlue.\xff\xfe");
}

}  // namespace
}  // namespace openglue::api
