// Fuzz target: SigV4 verification of arbitrary request bytes (Authorization header parsing,
// credential scope, signed-header list, presigned query parameters, dates, the body hash).
//
// Input format (so seeds are readable and mutations stay meaningful):
//   METHOD SP PATH[?QUERY] LF
//   Name: value LF            zero or more header lines
//   LF
//   body                      the rest
// Invariant checked: Verify never crashes, and it accepts only requests signed with the secret
// (the corpus' valid seeds are signed by botocore at the fixed clock below).
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>

#include "api/sigv4.h"
#include "common/clock.h"

namespace {

// 2026-03-14T09:26:53Z, the time src/api/testdata/fuzz/make_seeds.py signs the seeds at.
constexpr int64_t kNowMillis = 1773480413000;

openglue::api::HttpRequestView Parse(std::string_view in) {
  openglue::api::HttpRequestView request;
  size_t eol = in.find('\n');
  std::string_view line = in.substr(0, eol);
  in = eol == std::string_view::npos ? std::string_view() : in.substr(eol + 1);
  size_t space = line.find(' ');
  request.method = line.substr(0, space);
  std::string_view target = space == std::string_view::npos ? "/" : line.substr(space + 1);
  size_t q = target.find('?');
  request.path = target.substr(0, q);
  if (q != std::string_view::npos) request.query = target.substr(q + 1);
  while (!in.empty()) {
    eol = in.find('\n');
    line = in.substr(0, eol);
    in = eol == std::string_view::npos ? std::string_view() : in.substr(eol + 1);
    if (line.empty()) break;
    size_t colon = line.find(':');
    std::string_view name = line.substr(0, colon);
    std::string_view value = colon == std::string_view::npos ? "" : line.substr(colon + 1);
    if (!value.empty() && value.front() == ' ') value.remove_prefix(1);
    request.headers.emplace_back(std::string(name), std::string(value));
  }
  request.body = in;
  return request;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static openglue::FakeClock clock(kNowMillis);
  static openglue::api::SigV4Verifier verifier(
      {{"AKIAOPENGLUEEXAMPLE1", "openglue/Secret+Key/EXAMPLE0123456789abcd"}}, &clock, 900);
  std::string_view input(reinterpret_cast<const char*>(data), size);
  openglue::api::HttpRequestView request = Parse(input);
  auto result = verifier.Verify(request);
  // An accepted request names the only key the verifier knows.
  if (result.ok() && *result != "AKIAOPENGLUEEXAMPLE1") std::abort();
  return 0;
}
