#include "api/http_parser.h"

#include <algorithm>

namespace openglue::api {
namespace {

char Lower(char c) { return c >= 'A' && c <= 'Z' ? static_cast<char>(c - 'A' + 'a') : c; }

// RFC 9110 tchar.
bool IsTokenChar(unsigned char c) {
  if (c >= '0' && c <= '9') return true;
  if ((c | 0x20) >= 'a' && (c | 0x20) <= 'z') return true;
  switch (c) {
    case '!': case '#': case '$': case '%': case '&': case '\'': case '*': case '+': case '-':
    case '.': case '^': case '_': case '`': case '|': case '~':
      return true;
    default:
      return false;
  }
}

bool IsBlank(char c) { return c == ' ' || c == '\t'; }

std::string_view TrimBlanks(std::string_view s) {
  while (!s.empty() && IsBlank(s.front())) s.remove_prefix(1);
  while (!s.empty() && IsBlank(s.back())) s.remove_suffix(1);
  return s;
}

ParseResult Fail(HttpParseError* error, int status, std::string message) {
  error->status = status;
  error->message = std::move(message);
  return ParseResult::kError;
}

// Splits a comma-separated header value into trimmed, non-empty elements.
std::vector<std::string_view> ListElements(std::string_view value) {
  std::vector<std::string_view> out;
  size_t start = 0;
  while (start <= value.size()) {
    size_t comma = value.find(',', start);
    if (comma == std::string_view::npos) comma = value.size();
    std::string_view element = TrimBlanks(value.substr(start, comma - start));
    if (!element.empty()) out.push_back(element);
    start = comma + 1;
  }
  return out;
}

// A decimal number of at most 18 digits (so it cannot overflow); false otherwise. `*too_big` is
// set for a well-formed number of more digits.
bool ParseDecimal(std::string_view s, uint64_t* out, bool* too_big) {
  *too_big = false;
  if (s.empty()) return false;
  for (char c : s) {
    if (c < '0' || c > '9') return false;
  }
  size_t first = s.find_first_not_of('0');
  if (first == std::string_view::npos) {
    *out = 0;
    return true;
  }
  if (s.size() - first > 18) {
    *too_big = true;
    return false;
  }
  uint64_t v = 0;
  for (char c : s.substr(first)) v = v * 10 + static_cast<uint64_t>(c - '0');
  *out = v;
  return true;
}

}  // namespace

bool HeaderNameEquals(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i) {
    if (Lower(a[i]) != Lower(b[i])) return false;
  }
  return true;
}

std::string_view HttpRequestHead::path() const {
  std::string_view t = target;
  return t.substr(0, t.find('?'));
}

std::string_view HttpRequestHead::query() const {
  std::string_view t = target;
  size_t q = t.find('?');
  return q == std::string_view::npos ? std::string_view() : t.substr(q + 1);
}

std::optional<std::string_view> HttpRequestHead::Header(std::string_view name) const {
  for (const auto& [key, value] : headers) {
    if (HeaderNameEquals(key, name)) return std::string_view(value);
  }
  return std::nullopt;
}

ParseResult ParseRequestHead(std::string_view data, const HttpLimits& limits,
                             HttpRequestHead* head, HttpParseError* error) {
  // Empty lines before the request line are ignored, as RFC 9112 2.2 allows.
  size_t pos = 0;
  while (pos < data.size() && (data[pos] == '\r' || data[pos] == '\n')) {
    ++pos;
    if (pos > limits.max_head_bytes) return Fail(error, 431, "Request header fields too large");
  }
  // Lines end with CRLF or a bare LF. Find the blank line that ends the head first, so an
  // incomplete head costs one scan and no allocation.
  size_t end = std::string_view::npos;  // index just past the blank line
  for (size_t i = data.find('\n', pos); i != std::string_view::npos; i = data.find('\n', i + 1)) {
    if (i + 1 < data.size() && data[i + 1] == '\n') {
      end = i + 2;
      break;
    }
    if (i + 2 < data.size() && data[i + 1] == '\r' && data[i + 2] == '\n') {
      end = i + 3;
      break;
    }
    if (i + 1 > limits.max_head_bytes) break;
  }
  if (end == std::string_view::npos || end > limits.max_head_bytes) {
    if (data.size() > limits.max_head_bytes || end != std::string_view::npos)
      return Fail(error, 431, "Request header fields too large");
    return ParseResult::kIncomplete;
  }

  *head = HttpRequestHead();
  head->head_bytes = end;
  std::vector<std::string_view> lines;
  {
    size_t start = pos;
    while (start < end) {
      size_t nl = data.find('\n', start);
      std::string_view line = data.substr(start, nl - start);
      if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
      lines.push_back(line);
      start = nl + 1;
    }
  }
  // The last line is the blank one.
  if (lines.size() < 2 || !lines.back().empty()) return Fail(error, 400, "Malformed request");
  lines.pop_back();
  if (lines.size() - 1 > limits.max_headers) return Fail(error, 431, "Too many header fields");

  // Request line: method SP request-target SP HTTP-version.
  std::string_view line = lines[0];
  size_t sp1 = line.find(' ');
  size_t sp2 = sp1 == std::string_view::npos ? sp1 : line.find(' ', sp1 + 1);
  if (sp1 == std::string_view::npos || sp2 == std::string_view::npos || sp1 == 0 ||
      sp2 == sp1 + 1 || line.find(' ', sp2 + 1) != std::string_view::npos)
    return Fail(error, 400, "Malformed request line");
  std::string_view method = line.substr(0, sp1);
  std::string_view target = line.substr(sp1 + 1, sp2 - sp1 - 1);
  std::string_view version = line.substr(sp2 + 1);
  for (char c : method) {
    if (!IsTokenChar(static_cast<unsigned char>(c))) return Fail(error, 400, "Malformed method");
  }
  for (char c : target) {
    unsigned char u = static_cast<unsigned char>(c);
    if (u <= 0x20 || u == 0x7F) return Fail(error, 400, "Malformed request target");
  }
  if (version.size() != 8 || version.substr(0, 5) != "HTTP/" || version[6] != '.' ||
      version[5] < '0' || version[5] > '9' || version[7] < '0' || version[7] > '9')
    return Fail(error, 400, "Malformed HTTP version");
  if (version[5] != '1' || (version[7] != '0' && version[7] != '1'))
    return Fail(error, 505, "HTTP version not supported");
  head->method = std::string(method);
  head->target = std::string(target);
  head->minor_version = version[7] - '0';

  std::optional<uint64_t> content_length;
  std::optional<std::string_view> transfer_encoding;
  bool close = false, keep_alive = false;
  head->headers.reserve(lines.size() - 1);
  for (size_t i = 1; i < lines.size(); ++i) {
    line = lines[i];
    if (IsBlank(line.front())) return Fail(error, 400, "Folded header lines are not accepted");
    size_t colon = line.find(':');
    if (colon == std::string_view::npos || colon == 0) return Fail(error, 400, "Malformed header");
    std::string_view name = line.substr(0, colon);
    for (char c : name) {
      if (!IsTokenChar(static_cast<unsigned char>(c)))
        return Fail(error, 400, "Malformed header name");
    }
    std::string_view value = TrimBlanks(line.substr(colon + 1));
    for (char c : value) {
      unsigned char u = static_cast<unsigned char>(c);
      if ((u < 0x20 && u != '\t') || u == 0x7F)
        return Fail(error, 400, "Control character in a header value");
    }
    if (HeaderNameEquals(name, "content-length")) {
      // "42, 42" is one length sent twice (RFC 9110 8.6); differing values are refused, since
      // a proxy in front may pick the other one (request smuggling).
      std::vector<std::string_view> elements = ListElements(value);
      if (elements.empty()) return Fail(error, 400, "Invalid Content-Length");
      for (std::string_view element : elements) {
        uint64_t n = 0;
        bool too_big = false;
        if (!ParseDecimal(element, &n, &too_big)) {
          if (too_big) return Fail(error, 413, "Request body too large");
          return Fail(error, 400, "Invalid Content-Length");
        }
        if (content_length && *content_length != n)
          return Fail(error, 400, "Conflicting Content-Length headers");
        content_length = n;
      }
    } else if (HeaderNameEquals(name, "transfer-encoding")) {
      if (transfer_encoding) return Fail(error, 400, "More than one Transfer-Encoding header");
      transfer_encoding = value;
    } else if (HeaderNameEquals(name, "connection")) {
      for (std::string_view token : ListElements(value)) {
        if (HeaderNameEquals(token, "close")) close = true;
        if (HeaderNameEquals(token, "keep-alive")) keep_alive = true;
      }
    } else if (HeaderNameEquals(name, "expect")) {
      if (HeaderNameEquals(value, "100-continue")) head->expect_continue = true;
      else return Fail(error, 417, "Expectation failed");
    }
    head->headers.emplace_back(std::string(name), std::string(value));
  }

  if (transfer_encoding) {
    if (content_length)
      return Fail(error, 400, "Content-Length and Transfer-Encoding in one request");
    std::vector<std::string_view> codings = ListElements(*transfer_encoding);
    if (codings.size() != 1 || !HeaderNameEquals(codings[0], "chunked"))
      return Fail(error, 501, "Only the chunked transfer coding is supported");
    if (head->minor_version == 0)
      return Fail(error, 400, "Transfer-Encoding in an HTTP/1.0 request");
    head->chunked = true;
  } else if (content_length) {
    if (*content_length > limits.max_body_bytes) return Fail(error, 413, "Request body too large");
    head->content_length = *content_length;
  }
  head->keep_alive = head->minor_version == 1 ? !close : (keep_alive && !close);
  return ParseResult::kComplete;
}

ParseResult ChunkedDecoder::Decode(std::string_view data, size_t* consumed, std::string* body,
                                   HttpParseError* error) {
  size_t pos = 0;
  // Lines inside a chunked body (sizes, trailers) are short; a longer one is an attack.
  constexpr size_t kMaxLine = 4096;
  auto next_line = [&](std::string_view* line) -> ParseResult {
    size_t nl = data.find('\n', pos);
    if (nl == std::string_view::npos) {
      if (data.size() - pos > kMaxLine) return Fail(error, 400, "Malformed chunked body");
      return ParseResult::kIncomplete;
    }
    if (nl - pos > kMaxLine) return Fail(error, 400, "Malformed chunked body");
    *line = data.substr(pos, nl - pos);
    if (!line->empty() && line->back() == '\r') line->remove_suffix(1);
    pos = nl + 1;
    return ParseResult::kComplete;
  };
  ParseResult result = ParseResult::kIncomplete;
  while (true) {
    if (state_ == State::kDone) {
      result = ParseResult::kComplete;
      break;
    }
    if (state_ == State::kSize) {
      std::string_view line;
      ParseResult r = next_line(&line);
      if (r != ParseResult::kComplete) {
        result = r;
        break;
      }
      // chunk-size [ ; chunk-ext ]
      std::string_view size_text = TrimBlanks(line.substr(0, line.find(';')));
      if (size_text.empty() || size_text.size() > 15)
        return Fail(error, 400, "Malformed chunk size");
      uint64_t size = 0;
      for (char c : size_text) {
        int v = c >= '0' && c <= '9'   ? c - '0'
                : c >= 'a' && c <= 'f' ? c - 'a' + 10
                : c >= 'A' && c <= 'F' ? c - 'A' + 10
                                       : -1;
        if (v < 0) return Fail(error, 400, "Malformed chunk size");
        size = size * 16 + static_cast<uint64_t>(v);
      }
      if (size > max_body_bytes_ - total_) return Fail(error, 413, "Request body too large");
      remaining_ = size;
      total_ += size;
      state_ = size == 0 ? State::kTrailer : State::kData;
    } else if (state_ == State::kData) {
      size_t take = static_cast<size_t>(std::min<uint64_t>(remaining_, data.size() - pos));
      body->append(data.substr(pos, take));
      pos += take;
      remaining_ -= take;
      if (remaining_ > 0) break;  // kIncomplete: everything consumed
      state_ = State::kDataEnd;
    } else if (state_ == State::kDataEnd) {
      std::string_view line;
      ParseResult r = next_line(&line);
      if (r != ParseResult::kComplete) {
        result = r;
        break;
      }
      if (!line.empty()) return Fail(error, 400, "Malformed chunked body");
      state_ = State::kSize;
    } else if (state_ == State::kTrailer) {
      std::string_view line;
      ParseResult r = next_line(&line);
      if (r != ParseResult::kComplete) {
        result = r;
        break;
      }
      if (line.empty()) state_ = State::kDone;  // trailer fields are read and ignored
    }
  }
  *consumed = pos;
  return result;
}

ParseResult ParseRequest(std::string_view data, const HttpLimits& limits, HttpRequest* request,
                         size_t* consumed, HttpParseError* error) {
  ParseResult r = ParseRequestHead(data, limits, &request->head, error);
  if (r != ParseResult::kComplete) return r;
  std::string_view rest = data.substr(request->head.head_bytes);
  request->body.clear();
  if (request->head.chunked) {
    ChunkedDecoder decoder(limits.max_body_bytes);
    size_t used = 0;
    r = decoder.Decode(rest, &used, &request->body, error);
    if (r != ParseResult::kComplete) return r;
    *consumed = request->head.head_bytes + used;
    return r;
  }
  if (rest.size() < request->head.content_length) return ParseResult::kIncomplete;
  request->body.assign(rest.substr(0, request->head.content_length));
  *consumed = request->head.head_bytes + request->head.content_length;
  return ParseResult::kComplete;
}

}  // namespace openglue::api
