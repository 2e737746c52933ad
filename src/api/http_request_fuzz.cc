// libFuzzer target: the HTTP/1.1 request parser (api/http_parser.h) on arbitrary bytes.
// Parses as the server does, pipelined requests one after another, and checks the parser's
// own promises: it consumes what it says, within the input, and never grows a body past the
// limit. A chunked body is also fed to the incremental decoder in two pieces, which must agree.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>

#include "api/http_parser.h"

using openglue::api::ChunkedDecoder;
using openglue::api::HttpLimits;
using openglue::api::HttpParseError;
using openglue::api::HttpRequest;
using openglue::api::ParseRequest;
using openglue::api::ParseResult;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view input(reinterpret_cast<const char*>(data), size);
  HttpLimits limits;
  limits.max_head_bytes = 4096;
  limits.max_headers = 32;
  limits.max_body_bytes = 8192;
  std::string_view rest = input;
  for (int i = 0; i < 64 && !rest.empty(); ++i) {
    HttpRequest request;
    size_t consumed = 0;
    HttpParseError error;
    ParseResult r = ParseRequest(rest, limits, &request, &consumed, &error);
    if (r != ParseResult::kComplete) {
      if (r == ParseResult::kError && (error.status < 400 || error.status > 599)) std::abort();
      break;
    }
    if (consumed == 0 || consumed > rest.size()) std::abort();
    if (request.body.size() > limits.max_body_bytes) std::abort();
    if (request.head.chunked) {
      // The same body, fed in two pieces, decodes to the same bytes.
      std::string_view body = rest.substr(request.head.head_bytes, consumed - request.head.head_bytes);
      size_t cut = body.size() / 2;
      ChunkedDecoder decoder(limits.max_body_bytes);
      std::string out;
      size_t used = 0;
      HttpParseError e;
      std::string pending(body.substr(0, cut));
      ParseResult a = decoder.Decode(pending, &used, &out, &e);
      if (a == ParseResult::kError) std::abort();
      pending.erase(0, used);
      pending.append(body.substr(cut));
      ParseResult b = a;
      if (a != ParseResult::kComplete) b = decoder.Decode(pending, &used, &out, &e);
      if (b != ParseResult::kComplete || out != request.body) std::abort();
    }
    rest.remove_prefix(consumed);
  }
  return 0;
}
