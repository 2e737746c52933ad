#include "api/s3_gate.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <algorithm>
#include <map>
#include <optional>

#include "common/logging.h"
#include "common/strings.h"

namespace openglue::api {
namespace {

Result<std::string> Unescape(std::string_view text, bool plus_is_blank) {
  std::string out;
  out.reserve(text.size());
  for (size_t i = 0; i < text.size(); ++i) {
    char c = text[i];
    if (c == '%') {
      int hi = i + 2 < text.size() ? HexDigitValue(text[i + 1]) : -1;
      int lo = hi >= 0 ? HexDigitValue(text[i + 2]) : -1;
      if (hi < 0 || lo < 0) return Status::InvalidInput("malformed percent-escape in the request");
      out.push_back(static_cast<char>(hi * 16 + lo));
      i += 2;
    } else if (c == '+' && plus_is_blank) {
      out.push_back(' ');
    } else {
      out.push_back(c);
    }
  }
  return out;
}

// The query's parameters, names and values decoded as fasthttp decodes them.
Result<std::multimap<std::string, std::string>> QueryParameters(std::string_view query) {
  std::multimap<std::string, std::string> params;
  for (const std::string& part : Split(std::string(query), '&')) {
    if (part.empty()) continue;
    size_t eq = part.find('=');
    OG_ASSIGN_OR_RETURN(std::string name, QueryUnescape(part.substr(0, eq)));
    std::string value;
    if (eq != std::string::npos) {
      OG_ASSIGN_OR_RETURN(value, QueryUnescape(part.substr(eq + 1)));
    }
    params.emplace(std::move(name), std::move(value));
  }
  return params;
}

const std::string* FindParameter(const std::multimap<std::string, std::string>& params,
                                 std::string_view name, bool fold_case = false) {
  for (const auto& [key, value] : params)
    if (fold_case ? HeaderNameEquals(key, name) : key == name) return &value;
  return nullptr;
}

// A sub-resource (`?acl`) and the IAM actions reading, writing and deleting it.
struct Subresource {
  const char* name;
  const char* get;
  const char* put;
  const char* remove;
};
// Of buckets.
constexpr Subresource kBucketSubresources[] = {
    {"acl", "s3:GetBucketAcl", "s3:PutBucketAcl", "s3:PutBucketAcl"},
    {"policy", "s3:GetBucketPolicy", "s3:PutBucketPolicy", "s3:DeleteBucketPolicy"},
    {"policyStatus", "s3:GetBucketPolicyStatus", "s3:PutBucketPolicy", "s3:PutBucketPolicy"},
    {"cors", "s3:GetBucketCORS", "s3:PutBucketCORS", "s3:PutBucketCORS"},
    {"lifecycle", "s3:GetLifecycleConfiguration", "s3:PutLifecycleConfiguration",
     "s3:PutLifecycleConfiguration"},
    {"versioning", "s3:GetBucketVersioning", "s3:PutBucketVersioning", "s3:PutBucketVersioning"},
    {"tagging", "s3:GetBucketTagging", "s3:PutBucketTagging", "s3:PutBucketTagging"},
    {"encryption", "s3:GetEncryptionConfiguration", "s3:PutEncryptionConfiguration",
     "s3:PutEncryptionConfiguration"},
    {"ownershipControls", "s3:GetBucketOwnershipControls", "s3:PutBucketOwnershipControls",
     "s3:PutBucketOwnershipControls"},
    {"object-lock", "s3:GetBucketObjectLockConfiguration", "s3:PutBucketObjectLockConfiguration",
     "s3:PutBucketObjectLockConfiguration"},
    {"publicAccessBlock", "s3:GetBucketPublicAccessBlock", "s3:PutBucketPublicAccessBlock",
     "s3:PutBucketPublicAccessBlock"},
    {"logging", "s3:GetBucketLogging", "s3:PutBucketLogging", "s3:PutBucketLogging"},
    {"notification", "s3:GetBucketNotification", "s3:PutBucketNotification",
     "s3:PutBucketNotification"},
    {"website", "s3:GetBucketWebsite", "s3:PutBucketWebsite", "s3:DeleteBucketWebsite"},
    {"replication", "s3:GetReplicationConfiguration", "s3:PutReplicationConfiguration",
     "s3:PutReplicationConfiguration"},
    {"accelerate", "s3:GetAccelerateConfiguration", "s3:PutAccelerateConfiguration",
     "s3:PutAccelerateConfiguration"},
    {"requestPayment", "s3:GetBucketRequestPayment", "s3:PutBucketRequestPayment",
     "s3:PutBucketRequestPayment"},
    {"analytics", "s3:GetAnalyticsConfiguration", "s3:PutAnalyticsConfiguration",
     "s3:PutAnalyticsConfiguration"},
    {"metrics", "s3:GetMetricsConfiguration", "s3:PutMetricsConfiguration",
     "s3:PutMetricsConfiguration"},
    {"inventory", "s3:GetInventoryConfiguration", "s3:PutInventoryConfiguration",
     "s3:PutInventoryConfiguration"},
    {"intelligent-tiering", "s3:GetIntelligentTieringConfiguration",
     "s3:PutIntelligentTieringConfiguration", "s3:PutIntelligentTieringConfiguration"},
    {"location", "s3:GetBucketLocation", "s3:GetBucketLocation", "s3:GetBucketLocation"},
    {"versions", "s3:ListBucketVersions", "s3:ListBucketVersions", "s3:ListBucketVersions"},
    {"uploads", "s3:ListBucketMultipartUploads", "s3:ListBucketMultipartUploads",
     "s3:ListBucketMultipartUploads"},
};

// Of objects.
constexpr Subresource kObjectSubresources[] = {
    {"acl", "s3:GetObjectAcl", "s3:PutObjectAcl", "s3:PutObjectAcl"},
    {"tagging", "s3:GetObjectTagging", "s3:PutObjectTagging", "s3:DeleteObjectTagging"},
    {"retention", "s3:GetObjectRetention", "s3:PutObjectRetention", "s3:PutObjectRetention"},
    {"legal-hold", "s3:GetObjectLegalHold", "s3:PutObjectLegalHold", "s3:PutObjectLegalHold"},
    {"attributes", "s3:GetObjectAttributes", "s3:GetObjectAttributes", "s3:GetObjectAttributes"},
    {"torrent", "s3:GetObjectTorrent", "s3:GetObjectTorrent", "s3:GetObjectTorrent"},
};

// The access key after `Credential=` (SigV4) or before the ':' of "AWS KEY:SIG" (SigV2).
Result<std::string> KeyOfAuthorization(std::string_view value) {
  if (StartsWith(std::string(value), "AWS4-HMAC-SHA256")) {
    size_t at = value.find("Credential=");
    if (at == std::string_view::npos) return Status::InvalidInput("the Authorization header names no Credential");
    std::string_view rest = value.substr(at + 11);
    size_t slash = rest.find('/');
    if (slash == std::string_view::npos || slash == 0)
      return Status::InvalidInput("the Authorization header's Credential is malformed");
    // versitygw reads the first Credential=; so does this, and a second one is refused.
    if (rest.find("Credential=") != std::string_view::npos)
      return Status::InvalidInput("the Authorization header names two Credentials");
    return std::string(rest.substr(0, slash));
  }
  if (StartsWith(std::string(value), "AWS ")) {
    std::string_view rest = value.substr(4);
    size_t colon = rest.find(':');
    if (colon == std::string_view::npos || colon == 0)
      return Status::InvalidInput("the Authorization header is malformed");
    return std::string(rest.substr(0, colon));
  }
  return Status::InvalidInput("the Authorization header's scheme is not AWS4-HMAC-SHA256");
}

void AddCheck(S3Access* access, std::string action, const std::string& bucket, const std::string& key) {
  access->checks.push_back({std::move(action), bucket, key});
}

std::string XmlEscape(std::string_view text) {
  std::string out;
  for (char c : text) {
    switch (c) {
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '"': out += "&quot;"; break;
      case '\'': out += "&apos;"; break;
      default: out.push_back(c);
    }
  }
  return out;
}

std::string ErrorResponse(int status, std::string_view reason, std::string_view code,
                          std::string_view message, std::string_view resource, bool head_only) {
  std::string body = "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<Error><Code>" + std::string(code) +
                     "</Code><Message>" + XmlEscape(message) + "</Message><Resource>" +
                     XmlEscape(resource) + "</Resource><RequestId></RequestId></Error>";
  std::string out = "HTTP/1.1 " + std::to_string(status) + " " + std::string(reason) +
                    "\r\nContent-Type: application/xml\r\nContent-Length: " +
                    std::to_string(body.size()) + "\r\nConnection: close\r\n\r\n";
  if (!head_only) out += body;
  return out;
}

bool SendAll(int fd, std::string_view data) {
  while (!data.empty()) {
    ssize_t n = send(fd, data.data(), data.size(), MSG_NOSIGNAL);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    data.remove_prefix(static_cast<size_t>(n));
  }
  return true;
}

using Clock = std::chrono::steady_clock;

int RemainingMs(Clock::time_point deadline) {
  auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now()).count();
  return left < 0 ? 0 : static_cast<int>(left);
}

// Reads more bytes into `buffer` before `deadline`: false on timeout, EOF or error.
bool ReadMore(int fd, std::string* buffer, Clock::time_point deadline) {
  pollfd p{fd, POLLIN, 0};
  int ready = poll(&p, 1, RemainingMs(deadline));
  if (ready <= 0) return false;
  char chunk[16384];
  ssize_t n = recv(fd, chunk, sizeof(chunk), 0);
  if (n <= 0) return false;
  buffer->append(chunk, static_cast<size_t>(n));
  return true;
}

// The head rebuilt from what the gate parsed, with CRLF line ends, its Connection and Keep-Alive
// headers replaced by `Connection: close`: versitygw reads exactly the request that was checked
// (a signature survives, as SigV4 canonicalizes header values), and then closes.
std::string RebuiltHead(const HttpRequestHead& head) {
  std::string out = head.method + " " + head.target + " HTTP/1." + std::to_string(head.minor_version) + "\r\n";
  for (const auto& [name, value] : head.headers) {
    if (HeaderNameEquals(name, "Connection") || HeaderNameEquals(name, "Keep-Alive")) continue;
    out += name + ": " + value + "\r\n";
  }
  out += "Connection: close\r\n\r\n";
  return out;
}

// How much of what the client sends after the head is the request's body: its Content-Length,
// or its chunks up to the last; nothing after that is forwarded.
class BodyLimit {
 public:
  explicit BodyLimit(const HttpRequestHead& head)
      : chunked_(head.chunked), left_(head.content_length), decoder_(~0ull) {}
  // The length of the prefix of `data` that belongs to the body.
  size_t Take(std::string_view data) {
    if (done_) return 0;
    if (!chunked_) {
      size_t n = static_cast<size_t>(std::min<uint64_t>(left_, data.size()));
      left_ -= n;
      done_ = left_ == 0;
      return n;
    }
    size_t consumed = 0;
    HttpParseError error;
    ParseResult result = decoder_.Decode(data, &consumed, &scratch_, &error);
    scratch_.clear();
    if (result != ParseResult::kIncomplete) done_ = true;
    return consumed;
  }
  bool done() const { return done_; }

 private:
  const bool chunked_;
  uint64_t left_;
  ChunkedDecoder decoder_;
  std::string scratch_;
  bool done_ = false;
};

// Copies the response to the client and the rest of the body to versitygw until versitygw closes
// (after its one response) or nothing moves for `idle_ms`.
void Relay(int client, int upstream, int idle_ms, BodyLimit* body) {
  bool client_open = true;
  char buffer[65536];
  for (;;) {
    pollfd fds[2] = {{upstream, POLLIN, 0}, {client, static_cast<short>(client_open ? POLLIN : 0), 0}};
    int ready = poll(fds, 2, idle_ms);
    if (ready < 0 && errno == EINTR) continue;
    if (ready <= 0) return;
    if (fds[0].revents & (POLLIN | POLLHUP | POLLERR)) {
      ssize_t n = recv(upstream, buffer, sizeof(buffer), 0);
      if (n <= 0) return;
      if (!SendAll(client, std::string_view(buffer, static_cast<size_t>(n)))) return;
    }
    if (client_open && (fds[1].revents & (POLLIN | POLLHUP | POLLERR))) {
      ssize_t n = recv(client, buffer, sizeof(buffer), 0);
      if (n <= 0) {
        client_open = false;
        shutdown(upstream, SHUT_WR);
        continue;
      }
      size_t forward = body->Take(std::string_view(buffer, static_cast<size_t>(n)));
      if (forward > 0 && !SendAll(upstream, std::string_view(buffer, forward))) return;
    }
  }
}

}  // namespace

Result<std::string> PathUnescape(std::string_view text) { return Unescape(text, false); }
Result<std::string> QueryUnescape(std::string_view text) { return Unescape(text, true); }

Result<S3Access> DescribeS3Request(const HttpRequestHead& head) {
  S3Access access;
  int authorizations = 0;
  for (const auto& [name, value] : head.headers) {
    if (!HeaderNameEquals(name, "Authorization")) continue;
    if (++authorizations > 1) return Status::InvalidInput("the request has several Authorization headers");
    OG_ASSIGN_OR_RETURN(access.principal, KeyOfAuthorization(value));
  }
  std::string_view target = head.target;
  if (target.empty() || target[0] != '/')
    return Status::InvalidInput("the request target must be a path starting with '/'");
  OG_ASSIGN_OR_RETURN(auto params, QueryParameters(head.query()));
  // Presigned URLs: SigV4's X-Amz-Credential, SigV2's AWSAccessKeyId.
  for (const char* name : {"X-Amz-Credential", "AWSAccessKeyId"}) {
    int count = 0;
    for (const auto& [key, value] : params) {
      if (!HeaderNameEquals(key, name)) continue;
      if (++count > 1 || !access.principal.empty())
        return Status::InvalidInput("the request is signed more than once");
      std::string key_id = value.substr(0, value.find('/'));
      if (key_id.empty()) return Status::InvalidInput(std::string("the request's ") + name + " is malformed");
      access.principal = key_id;
    }
  }
  if (access.principal.empty() && (FindParameter(params, "X-Amz-Signature", true) ||
                                   FindParameter(params, "Signature", true)))
    return Status::InvalidInput("the request carries a signature but no credential");

  OG_ASSIGN_OR_RETURN(std::string path, PathUnescape(head.path()));
  std::string rest = path.substr(1);
  size_t slash = rest.find('/');
  std::string bucket = rest.substr(0, slash);
  std::string key = slash == std::string::npos ? "" : rest.substr(slash + 1);
  const std::string& method = head.method;
  const bool read = method == "GET" || method == "HEAD";

  if (bucket.empty()) {
    AddCheck(&access, "s3:ListAllMyBuckets", "", "");
    return access;
  }
  if (key.empty()) {
    if (method == "POST") {
      if (FindParameter(params, "delete")) {
        access.deletes_listed_keys = true;
        return access;
      }
      return Status::InvalidInput(
          "browser-form POST uploads are not served by OpenGlue's S3 API (docs/security.md); use PUT");
    }
    bool sub = false;
    for (const Subresource& s : kBucketSubresources) {
      if (!FindParameter(params, s.name)) continue;
      sub = true;
      AddCheck(&access, read ? s.get : method == "DELETE" ? s.remove : s.put, bucket, "");
    }
    if (!sub) {
      const char* action = read ? "s3:ListBucket"
                           : method == "PUT" ? "s3:CreateBucket"
                           : method == "DELETE" ? "s3:DeleteBucket" : nullptr;
      if (action == nullptr) return Status::InvalidInput("method " + method + " is not an S3 bucket operation");
      AddCheck(&access, action, bucket, "");
    }
    return access;
  }
  bool sub = false;
  for (const Subresource& s : kObjectSubresources) {
    if (!FindParameter(params, s.name)) continue;
    sub = true;
    AddCheck(&access, read ? s.get : method == "DELETE" ? s.remove : s.put, bucket, key);
  }
  const bool upload = FindParameter(params, "uploadId") != nullptr;
  if (!sub) {
    if (read) {
      AddCheck(&access, upload ? "s3:ListMultipartUploadParts" : "s3:GetObject", bucket, key);
      if (FindParameter(params, "versionId")) AddCheck(&access, "s3:GetObjectVersion", bucket, key);
    } else if (method == "PUT") {
      AddCheck(&access, "s3:PutObject", bucket, key);
    } else if (method == "POST") {
      if (FindParameter(params, "restore")) AddCheck(&access, "s3:RestoreObject", bucket, key);
      else if (FindParameter(params, "select")) AddCheck(&access, "s3:GetObject", bucket, key);
      else AddCheck(&access, "s3:PutObject", bucket, key);  // CreateMultipartUpload, Complete...
    } else if (method == "DELETE") {
      AddCheck(&access, upload ? "s3:AbortMultipartUpload" : "s3:DeleteObject", bucket, key);
      if (FindParameter(params, "versionId")) AddCheck(&access, "s3:DeleteObjectVersion", bucket, key);
    } else {
      return Status::InvalidInput("method " + method + " is not an S3 object operation");
    }
  }
  // CopyObject and UploadPartCopy read their source.
  if (std::optional<std::string_view> source = head.Header("x-amz-copy-source")) {
    OG_ASSIGN_OR_RETURN(std::string decoded, QueryUnescape(*source));
    std::string_view from = decoded;
    if (!from.empty() && from[0] == '/') from.remove_prefix(1);
    size_t cut = from.find('/');
    std::string source_bucket(from.substr(0, cut));
    std::string source_key = cut == std::string_view::npos ? "" : std::string(from.substr(cut + 1));
    source_key = source_key.substr(0, source_key.find("?versionId="));
    AddCheck(&access, "s3:GetObject", source_bucket, source_key);
  }
  return access;
}

Status CheckRunRequest(const HttpRequestHead& head, const S3Access& access) {
  // Only what the head shows; Serve adds the body's problems.
  OG_ASSIGN_OR_RETURN(std::string path, PathUnescape(head.path()));
  // Keys whose segments are empty, `.` or `..`, or hold NUL, are refused to runs: the store's
  // file layout cannot hold them, and a policy pattern should mean one object.
  std::string_view rest = std::string_view(path).substr(1);
  size_t slash = rest.find('/');
  if (slash != std::string_view::npos && slash + 1 < rest.size()) {
    std::string_view key = rest.substr(slash + 1);
    size_t begin = 0;
    while (begin <= key.size()) {
      size_t end = key.find('/', begin);
      if (end == std::string_view::npos) end = key.size();
      std::string_view segment = key.substr(begin, end - begin);
      bool last = end == key.size();
      if ((segment.empty() && !(last && begin > 0)) || segment == "." || segment == "..")
        return Status::InvalidInput("object keys with empty, '.' or '..' segments are refused to job runs");
      begin = end + 1;
    }
  }
  if (path.find('\0') != std::string::npos) return Status::InvalidInput("the path holds NUL");
  for (const S3Check& check : access.checks)
    if (check.key.find("/../") != std::string::npos || StartsWith(check.key, "../"))
      return Status::InvalidInput("the copy source has '..' segments");
  if (access.deletes_listed_keys) {
    for (const auto& [name, value] : head.headers)
      if (HeaderNameEquals(name, "Content-Encoding") && value.find("aws-chunked") != std::string::npos)
        return Status::InvalidInput("DeleteObjects from a job run cannot use aws-chunked encoding");
  }
  return Status::OK();
}

Result<std::vector<std::string>> DeleteObjectKeys(std::string_view body) {
  std::vector<std::string> keys;
  size_t pos = 0;
  bool declaration_allowed = true;
  while ((pos = body.find('<', pos)) != std::string_view::npos) {
    std::string_view tag = body.substr(pos);
    if (StartsWith(std::string(tag.substr(0, 5)), "<?xml") && declaration_allowed) {
      size_t end = body.find("?>", pos);
      if (end == std::string_view::npos) return Status::InvalidInput("unterminated XML declaration");
      pos = end + 2;
      declaration_allowed = false;
      continue;
    }
    declaration_allowed = false;
    if (tag.size() > 1 && (tag[1] == '!' || tag[1] == '?'))
      return Status::InvalidInput("the DeleteObjects body has CDATA, comments, DTDs or processing instructions");
    size_t close = body.find('>', pos);
    if (close == std::string_view::npos) return Status::InvalidInput("unterminated XML tag");
    std::string_view inside = body.substr(pos + 1, close - pos - 1);
    size_t name_end = inside.find_first_of(" \t\r\n/");
    std::string_view name = inside.substr(0, name_end);
    if (!name.empty() && name[0] == '/') name.remove_prefix(1);
    if (name.find(':') != std::string_view::npos && name.substr(name.find(':') + 1) == "Key")
      return Status::InvalidInput("the DeleteObjects body names a namespaced Key");
    pos = close + 1;
    if (inside == "Key" || StartsWith(std::string(inside), "Key ") || StartsWith(std::string(inside), "Key\t")) {
      size_t end = body.find("</Key>", pos);
      if (end == std::string_view::npos) return Status::InvalidInput("unterminated Key element");
      std::string_view raw = body.substr(pos, end - pos);
      if (raw.find('<') != std::string_view::npos)
        return Status::InvalidInput("a Key element holds markup");
      std::string key;
      for (size_t i = 0; i < raw.size(); ++i) {
        if (raw[i] != '&') {
          key.push_back(raw[i]);
          continue;
        }
        size_t semi = raw.find(';', i);
        if (semi == std::string_view::npos) return Status::InvalidInput("unterminated entity in a Key");
        std::string_view entity = raw.substr(i + 1, semi - i - 1);
        if (entity == "amp") key += '&';
        else if (entity == "lt") key += '<';
        else if (entity == "gt") key += '>';
        else if (entity == "quot") key += '"';
        else if (entity == "apos") key += '\'';
        else if (!entity.empty() && entity[0] == '#') {
          bool hex = entity.size() > 1 && (entity[1] == 'x' || entity[1] == 'X');
          std::string digits(entity.substr(hex ? 2 : 1));
          if (digits.empty() || digits.size() > 8) return Status::InvalidInput("bad character reference in a Key");
          char* stop = nullptr;
          unsigned long code = std::strtoul(digits.c_str(), &stop, hex ? 16 : 10);
          if (*stop != '\0' || code == 0 || code > 0x10FFFF) return Status::InvalidInput("bad character reference in a Key");
          // UTF-8
          if (code < 0x80) key += static_cast<char>(code);
          else if (code < 0x800) { key += static_cast<char>(0xC0 | (code >> 6)); key += static_cast<char>(0x80 | (code & 0x3F)); }
          else if (code < 0x10000) { key += static_cast<char>(0xE0 | (code >> 12)); key += static_cast<char>(0x80 | ((code >> 6) & 0x3F)); key += static_cast<char>(0x80 | (code & 0x3F)); }
          else { key += static_cast<char>(0xF0 | (code >> 18)); key += static_cast<char>(0x80 | ((code >> 12) & 0x3F)); key += static_cast<char>(0x80 | ((code >> 6) & 0x3F)); key += static_cast<char>(0x80 | (code & 0x3F)); }
        } else {
          return Status::InvalidInput("unknown entity in a Key");
        }
        i = semi;
      }
      keys.push_back(std::move(key));
      pos = end + 6;
    }
  }
  return keys;
}

Status AuthorizeS3Access(const RunAuthorizer& authorizer, const S3Access& access,
                         const CodeObjects& code_objects) {
  if (access.principal.empty() || authorizer.IsAdministrator(access.principal)) return Status::OK();
  std::optional<RunAuthorizer::RunPolicy> run = authorizer.RunPolicyOf(access.principal);
  if (!run) return Status::OK();
  if (!access.refused_to_runs.empty()) return Status::InvalidInput(access.refused_to_runs);
  std::optional<std::map<std::string, std::string>> code;
  for (const S3Check& check : access.checks) {
    OG_RETURN_NOT_OK(RunAuthorizer::AuthorizeResourceFor(*run, access.principal, check.action,
                                                         S3ResourceArn(check.bucket, check.key)));
    const std::string& action = check.action;
    bool writes = StartsWith(action, "s3:Put") || StartsWith(action, "s3:Delete") ||
                  action == "s3:AbortMultipartUpload" || action == "s3:RestoreObject";
    if (!writes || check.key.empty()) continue;
    if (!code) {
      Result<std::map<std::string, std::string>> listed = code_objects();
      if (!listed.ok()) return listed.status();
      code = std::move(*listed);
    }
    std::string object = check.bucket + "/" + check.key;
    for (const auto& [entry, job] : *code) {
      bool holds = entry == object || (entry.back() == '/' && StartsWith(object, entry));
      if (!holds) continue;
      return Status(StatusCode::kAccessDenied,
                    "User: " + access.principal + " (job run " + run->run.run_id + " of job " +
                        run->run.job + ") is not authorized to perform: " + action + " on resource: " +
                        S3ResourceArn(check.bucket, check.key) + ": it is code of job " + job +
                        " (job runs never change a job's code; docs/security.md)");
    }
  }
  return Status::OK();
}

jobs::StoreGrants StoreGrantsOf(const std::vector<std::string>& statements) {
  jobs::StoreGrants grants;
  grants.read_all = grants.write_all = false;
  for (const std::string& entry : statements) {
    PolicyStatement statement = ParseStatement(entry);
    bool reads = ActionMatches(statement.action, "s3:GetObject");
    bool writes = ActionMatches(statement.action, "s3:PutObject");
    if (!reads && !writes) continue;
    std::vector<std::string> resources = statement.resources;
    if (resources.empty()) resources.push_back("*");
    for (const std::string& resource : resources) {
      if (resource == "*" || resource == "arn:aws:s3:::*") {
        grants.read_all |= reads;
        grants.write_all |= writes;
        continue;
      }
      if (!StartsWith(resource, "arn:aws:s3:::")) continue;
      std::string path = resource.substr(13);
      size_t wildcard = path.find_first_of("*?");
      if (wildcard == std::string::npos) {
        if (reads && path.find('/') != std::string::npos) grants.read_objects.push_back(path);
        continue;
      }
      // bucket/prefix/* : the folder bucket/prefix, and nothing narrower or wider.
      if (wildcard + 1 != path.size() || path[wildcard] != '*' || wildcard < 2 || path[wildcard - 1] != '/')
        continue;
      std::string folder = path.substr(0, wildcard - 1);
      if (reads) grants.read_folders.push_back(folder);
      if (writes) grants.write_folders.push_back(folder);
    }
  }
  return grants;
}

Result<std::unique_ptr<S3Gate>> S3Gate::Make(S3GateOptions options, S3Authorize authorize, S3IsRun is_run) {
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(static_cast<uint16_t>(options.port));
  std::string host = options.host == "localhost" ? "127.0.0.1" : options.host;
  if (inet_pton(AF_INET, host.c_str(), &addr.sin_addr) != 1)
    return Status::InvalidInput("S3 API host '" + options.host + "' is not an IPv4 address");
  int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return Status::Internal(std::string("socket: ") + std::strerror(errno));
  int one = 1;
  setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
  if (bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) != 0 || listen(fd, SOMAXCONN) != 0) {
    std::string error = std::strerror(errno);
    close(fd);
    return Status::Internal("the S3 API cannot listen on " + options.host + ":" +
                            std::to_string(options.port) + ": " + error);
  }
  socklen_t len = sizeof(addr);
  getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len);
  int port = ntohs(addr.sin_port);
  return std::unique_ptr<S3Gate>(new S3Gate(std::move(options), std::move(authorize), std::move(is_run), fd, port));
}

S3Gate::S3Gate(S3GateOptions options, S3Authorize authorize, S3IsRun is_run, int listen_fd, int port)
    : options_(std::move(options)),
      authorize_(std::move(authorize)),
      is_run_(std::move(is_run)),
      listen_fd_(listen_fd),
      port_(port) {}

S3Gate::~S3Gate() {
  Stop();
  close(listen_fd_);
}

std::string S3Gate::endpoint() const {
  std::string host = options_.host.empty() || options_.host == "0.0.0.0" ? "127.0.0.1" : options_.host;
  return "http://" + host + ":" + std::to_string(port_);
}

void S3Gate::Start() {
  acceptor_ = std::thread([this] { AcceptLoop(); });
}

void S3Gate::Stop() {
  if (stopping_.exchange(true)) {
    if (acceptor_.joinable()) acceptor_.join();
    return;
  }
  shutdown(listen_fd_, SHUT_RDWR);
  if (acceptor_.joinable()) acceptor_.join();
  MutexLock lock(&mutex_);
  for (int fd : clients_) shutdown(fd, SHUT_RDWR);
  while (active_ > 0) idle_.Wait(&mutex_);
}

void S3Gate::AcceptLoop() {
  while (!stopping_) {
    pollfd p{listen_fd_, POLLIN, 0};
    if (poll(&p, 1, 500) <= 0) continue;
    int client = accept4(listen_fd_, nullptr, nullptr, SOCK_CLOEXEC);
    if (client < 0) continue;
    int one = 1;
    setsockopt(client, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
    {
      MutexLock lock(&mutex_);
      if (active_ >= options_.max_connections || stopping_) {
        SendAll(client, ErrorResponse(503, "Slow Down", "SlowDown", "too many connections", "", false));
        close(client);
        continue;
      }
      ++active_;
      clients_.insert(client);
    }
    std::thread([this, client] { Serve(client); }).detach();
  }
}

void S3Gate::Serve(int client) {
  timeval send_timeout{options_.idle_timeout_ms / 1000, (options_.idle_timeout_ms % 1000) * 1000};
  setsockopt(client, SOL_SOCKET, SO_SNDTIMEO, &send_timeout, sizeof(send_timeout));
  auto finish = [&] {
    MutexLock lock(&mutex_);
    clients_.erase(client);
    close(client);
    if (--active_ == 0) idle_.SignalAll();
  };
  std::string buffer;
  HttpLimits limits;
  limits.max_body_bytes = ~0ull;
  HttpRequestHead head;
  HttpParseError parse_error;
  Clock::time_point deadline = Clock::now() + std::chrono::milliseconds(options_.head_timeout_ms);
  for (;;) {
    ParseResult parsed = ParseRequestHead(buffer, limits, &head, &parse_error);
    if (parsed == ParseResult::kComplete) break;
    if (parsed == ParseResult::kError) {
      SendAll(client, ErrorResponse(parse_error.status, "Bad Request", "InvalidRequest", parse_error.message, "", false));
      return finish();
    }
    if (!ReadMore(client, &buffer, deadline)) return finish();
  }
  const bool head_only = head.method == "HEAD";
  std::string resource(head.path());
  auto refuse = [&](const Status& status) {
    bool denied = status.code() == StatusCode::kAccessDenied;
    SendAll(client, ErrorResponse(denied ? 403 : 400, denied ? "Forbidden" : "Bad Request",
                                  denied ? "AccessDenied" : "InvalidRequest", status.message(),
                                  resource, head_only));
  };
  Result<S3Access> access = DescribeS3Request(head);
  if (!access.ok()) {
    refuse(access.status());
    return finish();
  }
  // What a run credential may not send; the authorizer refuses it to runs (RunRefusal).
  Status strict = CheckRunRequest(head, *access);
  if (!strict.ok()) access->refused_to_runs = strict.message();
  // A run's DeleteObjects body is read (up to max_delete_body) so that its keys are checked.
  std::string_view rest = std::string_view(buffer).substr(head.head_bytes);
  const bool run = !access->principal.empty() && is_run_ && is_run_(access->principal);
  if (access->deletes_listed_keys && !run) {
    // Not a run's: nothing to check in the body (versitygw authenticates and decides).
  } else if (access->deletes_listed_keys && !head.chunked && head.content_length <= options_.max_delete_body) {
    if (head.expect_continue && rest.size() < head.content_length)
      SendAll(client, "HTTP/1.1 100 Continue\r\n\r\n");
    Clock::time_point body_deadline = Clock::now() + std::chrono::milliseconds(options_.idle_timeout_ms);
    while (buffer.size() - head.head_bytes < head.content_length)
      if (!ReadMore(client, &buffer, body_deadline)) return finish();
    Result<std::vector<std::string>> keys =
        DeleteObjectKeys(std::string_view(buffer).substr(head.head_bytes, head.content_length));
    std::string bucket = std::string(head.path()).substr(1);
    bucket = bucket.substr(0, bucket.find('/'));
    if (keys.ok()) {
      for (const std::string& key : *keys) access->checks.push_back({"s3:DeleteObject", bucket, key});
    } else if (access->refused_to_runs.empty()) {
      access->refused_to_runs = keys.status().message();
    }
    rest = std::string_view(buffer).substr(head.head_bytes);
  } else if (access->deletes_listed_keys && access->refused_to_runs.empty()) {
    access->refused_to_runs = "a DeleteObjects body over " + std::to_string(options_.max_delete_body) +
                              " bytes or without a Content-Length";
  }
  Status allowed = authorize_(*access);
  if (!allowed.ok()) {
    refuse(allowed);
    return finish();
  }
  int upstream = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  std::strncpy(addr.sun_path, options_.upstream.c_str(), sizeof(addr.sun_path) - 1);
  if (upstream < 0 || connect(upstream, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) != 0) {
    if (upstream >= 0) close(upstream);
    SendAll(client, ErrorResponse(503, "Service Unavailable", "ServiceUnavailable",
                                  "the S3 API's store server is not running", resource, head_only));
    return finish();
  }
  setsockopt(upstream, SOL_SOCKET, SO_SNDTIMEO, &send_timeout, sizeof(send_timeout));
  std::string forward = RebuiltHead(head);
  BodyLimit body(head);
  forward.append(rest.substr(0, body.Take(rest)));
  if (SendAll(upstream, forward)) Relay(client, upstream, options_.idle_timeout_ms, &body);
  close(upstream);
  finish();
}

}  // namespace openglue::api
