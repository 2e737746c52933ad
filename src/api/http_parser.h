// HTTP/1.1 request parsing as pure functions over bytes: no sockets, no clocks, no allocation
// beyond the parsed result. The server feeds it what it has read; the fuzzer feeds it anything.
//
// A request is parsed in two steps so the server can decide about a request from its head alone
// (authentication, declared length) before it reads a body:
//   1. ParseRequestHead: the request line and the headers, up to the blank line.
//   2. the body: `content_length` bytes, or chunked transfer coding through ChunkedDecoder.
// ParseRequest does both at once (for tests and the fuzzer).
//
// What is refused (HttpParseError::status says which answer the client gets):
//   400  a malformed request line or header, a bare LF line ending inside a header name, a
//        Content-Length that is not a number, several Content-Length headers with different
//        values, Content-Length together with Transfer-Encoding, a malformed chunk, HTTP/1.1
//        without Host
//   413  a declared or chunked body longer than HttpLimits::max_body_bytes
//   431  a head longer than HttpLimits::max_head_bytes or with more than max_headers headers
//   501  a Transfer-Encoding other than "chunked"
//   505  an HTTP version other than 1.0 and 1.1
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace openglue::api {

struct HttpLimits {
  size_t max_head_bytes = 64 * 1024;
  size_t max_headers = 128;
  uint64_t max_body_bytes = 16ull << 20;
};

struct HttpRequestHead {
  std::string method;
  std::string target;  // as sent: path and query
  std::string_view path() const;
  std::string_view query() const;  // without '?'; empty when there is none
  int minor_version = 1;           // HTTP/1.<minor_version>
  // In the order received, names as sent (case preserved), values without surrounding blanks.
  std::vector<std::pair<std::string, std::string>> headers;
  bool chunked = false;
  uint64_t content_length = 0;  // 0 when chunked or absent
  // Whether the connection may serve another request after this one.
  bool keep_alive = true;
  // Whether the client sent "Expect: 100-continue".
  bool expect_continue = false;
  size_t head_bytes = 0;  // bytes of the request line and headers, blank line included

  // The first value of header `name` (case-insensitive), or nullopt.
  std::optional<std::string_view> Header(std::string_view name) const;
};

struct HttpParseError {
  int status = 400;
  std::string message;  // plain ASCII, safe to send
};

enum class ParseResult { kIncomplete, kComplete, kError };

// Parses the head at the start of `data`. kComplete fills `head` (head->head_bytes says where
// the body starts); kIncomplete means more bytes are needed (and none of the limits is passed
// yet); kError fills `error`. Empty lines before the request line are skipped (RFC 9112 2.2) and
// counted in head_bytes.
ParseResult ParseRequestHead(std::string_view data, const HttpLimits& limits, HttpRequestHead* head,
                             HttpParseError* error);

// Decodes a chunked body incrementally. Feed it the bytes after the head as they arrive.
class ChunkedDecoder {
 public:
  explicit ChunkedDecoder(uint64_t max_body_bytes) : max_body_bytes_(max_body_bytes) {}

  // Consumes a prefix of `data` (*consumed bytes), appending decoded payload to `body`.
  // kComplete once the last chunk and the trailers are read; kIncomplete when all of `data`
  // that can be used now is consumed; kError (with `error`) on a malformed chunk or an
  // oversized body.
  ParseResult Decode(std::string_view data, size_t* consumed, std::string* body,
                     HttpParseError* error);

 private:
  enum class State { kSize, kData, kDataEnd, kTrailer, kDone };
  State state_ = State::kSize;
  uint64_t remaining_ = 0;  // bytes left in the current chunk
  uint64_t total_ = 0;
  const uint64_t max_body_bytes_;
};

struct HttpRequest {
  HttpRequestHead head;
  std::string body;
};

// Parses one whole request at the start of `data`: head and body. kComplete sets *consumed to
// the request's length, so pipelined requests are parsed by calling again on the rest.
ParseResult ParseRequest(std::string_view data, const HttpLimits& limits, HttpRequest* request,
                         size_t* consumed, HttpParseError* error);

// Header name comparison, ASCII case-insensitive.
bool HeaderNameEquals(std::string_view a, std::string_view b);

}  // namespace openglue::api
