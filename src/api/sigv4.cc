#include "api/sigv4.h"

#include <openssl/crypto.h>
#include <openssl/evp.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <initializer_list>
#include <optional>

#include "common/strings.h"

// The algorithm follows AWS's published description of Signature Version 4:
//   CanonicalRequest = Method \n CanonicalURI \n CanonicalQueryString \n CanonicalHeaders \n
//                      SignedHeaders \n HashedPayload
//   StringToSign     = "AWS4-HMAC-SHA256" \n Timestamp \n Scope \n Hex(SHA256(CanonicalRequest))
//   SigningKey       = HMAC(HMAC(HMAC(HMAC("AWS4" + secret, yyyymmdd), region), service),
//                           "aws4_request")
//   Signature        = Hex(HMAC(SigningKey, StringToSign))

namespace openglue::api {
namespace {

constexpr std::string_view kAlgorithm = "AWS4-HMAC-SHA256";
constexpr std::string_view kTerminator = "aws4_request";
constexpr std::string_view kUnsignedPayload = "UNSIGNED-PAYLOAD";
constexpr int64_t kMaxPresignedExpires = 604800;  // one week, AWS's limit
constexpr size_t kMaxEchoedChars = 256;

constexpr std::string_view kMismatchMessage =
    "The request signature we calculated does not match the signature you provided. Check your "
    "AWS Secret Access Key and signing method. Consult the service documentation for details.";

Status MissingToken() {
  return Status(StatusCode::kMissingAuthenticationToken, "Missing Authentication Token");
}
Status Incomplete(std::string message) {
  return Status(StatusCode::kIncompleteSignature, std::move(message));
}
Status Invalid(std::string message) {
  return Status(StatusCode::kInvalidSignature, std::move(message));
}

// ---- Crypto (OpenSSL 3) ----------------------------------------------------------------------

using Digest = std::array<unsigned char, 32>;
constexpr size_t kShaBlock = 64;  // SHA-256's block size, HMAC's key block

// SHA-256, fetched from the default provider once: EVP_sha256() makes every digest operation
// fetch the algorithm again (OpenSSL 3), which is a measurable share of a request's CPU. If the
// fetch fails (no default provider), the legacy handle still works.
const EVP_MD* Sha256Algorithm() {
  static const EVP_MD* const kMd = [] {
    EVP_MD* fetched = EVP_MD_fetch(nullptr, "SHA256", nullptr);
    return fetched != nullptr ? static_cast<const EVP_MD*>(fetched) : EVP_sha256();
  }();
  return kMd;
}

// One digest context per thread, reused (re-initialized) by every digest the thread computes.
EVP_MD_CTX* ThreadDigestContext() {
  struct Holder {
    EVP_MD_CTX* ctx = EVP_MD_CTX_new();
    ~Holder() { EVP_MD_CTX_free(ctx); }
  };
  thread_local Holder holder;
  return holder.ctx;
}

// SHA-256 of the concatenation of `parts`.
bool Sha256Parts(std::initializer_list<std::string_view> parts, Digest* out) {
  EVP_MD_CTX* ctx = ThreadDigestContext();
  if (ctx == nullptr || EVP_DigestInit_ex2(ctx, Sha256Algorithm(), nullptr) != 1) return false;
  for (std::string_view part : parts) {
    if (EVP_DigestUpdate(ctx, part.data(), part.size()) != 1) return false;
  }
  unsigned int len = 0;
  return EVP_DigestFinal_ex(ctx, out->data(), &len) == 1 && len == out->size();
}

bool Sha256(std::string_view data, Digest* out) { return Sha256Parts({data}, out); }

// HMAC-SHA256 (RFC 2104) over the fetched SHA-256: H((K ^ opad) || H((K ^ ipad) || data)),
// K the key zero-padded to the block size (hashed first if longer). The padded keys are wiped.
bool HmacSha256(const unsigned char* key, size_t key_len, std::string_view data, Digest* out) {
  std::array<unsigned char, kShaBlock> block{};
  if (key_len > kShaBlock) {
    Digest hashed;
    if (!Sha256(std::string_view(reinterpret_cast<const char*>(key), key_len), &hashed))
      return false;
    std::copy(hashed.begin(), hashed.end(), block.begin());
    OPENSSL_cleanse(hashed.data(), hashed.size());
  } else if (key_len > 0) {
    std::copy(key, key + key_len, block.begin());
  }
  std::array<unsigned char, kShaBlock> ipad, opad;
  for (size_t i = 0; i < kShaBlock; ++i) {
    ipad[i] = static_cast<unsigned char>(block[i] ^ 0x36);
    opad[i] = static_cast<unsigned char>(block[i] ^ 0x5c);
  }
  auto chars = [](const auto& bytes) {
    return std::string_view(reinterpret_cast<const char*>(bytes.data()), bytes.size());
  };
  Digest inner;
  bool ok = Sha256Parts({chars(ipad), data}, &inner) && Sha256Parts({chars(opad), chars(inner)}, out);
  OPENSSL_cleanse(block.data(), block.size());
  OPENSSL_cleanse(ipad.data(), ipad.size());
  OPENSSL_cleanse(opad.data(), opad.size());
  return ok;
}

std::string_view AsChars(const Digest& d) {
  return std::string_view(reinterpret_cast<const char*>(d.data()), d.size());
}

// ---- Text helpers ----------------------------------------------------------------------------

bool EqualsIgnoreCase(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i) {
    unsigned char x = static_cast<unsigned char>(a[i]);
    unsigned char y = static_cast<unsigned char>(b[i]);
    if (x >= 'A' && x <= 'Z') x = static_cast<unsigned char>(x - 'A' + 'a');
    if (y >= 'A' && y <= 'Z') y = static_cast<unsigned char>(y - 'A' + 'a');
    if (x != y) return false;
  }
  return true;
}

bool IsSpace(char c) {
  return c == ' ' || c == '\t' || c == '\r' || c == '\n' || c == '\v' || c == '\f';
}

std::string_view TrimView(std::string_view s) {
  while (!s.empty() && IsSpace(s.front())) s.remove_prefix(1);
  while (!s.empty() && IsSpace(s.back())) s.remove_suffix(1);
  return s;
}

// SigV4's Trimall: strips leading and trailing whitespace and turns each inner run of
// whitespace into one space (what botocore does with ' '.join(value.split())).
void AppendTrimAll(std::string* out, std::string_view value) {
  value = TrimView(value);
  bool in_space = false;
  for (char c : value) {
    if (IsSpace(c)) {
      in_space = true;
      continue;
    }
    if (in_space) out->push_back(' ');
    in_space = false;
    out->push_back(c);
  }
}

// User-controlled text quoted in an error message: printable ASCII only, bounded length.
std::string Echo(std::string_view s) {
  std::string out;
  size_t n = std::min(s.size(), kMaxEchoedChars);
  out.reserve(n + 3);
  for (size_t i = 0; i < n; ++i) {
    unsigned char c = static_cast<unsigned char>(s[i]);
    out.push_back(c >= 0x20 && c < 0x7F ? static_cast<char>(c) : '?');
  }
  if (s.size() > n) out += "...";
  return out;
}

bool IsUnreserved(unsigned char c) {
  return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-' ||
         c == '_' || c == '.' || c == '~';
}

// SigV4's UriEncode: RFC 3986 unreserved characters are kept, every other byte becomes %XX with
// upper-case hex; '/' is kept only when encoding a path.
void AppendUriEncoded(std::string* out, std::string_view s, bool keep_slash) {
  static constexpr char kHex[] = "0123456789ABCDEF";
  for (char ch : s) {
    unsigned char c = static_cast<unsigned char>(ch);
    if (IsUnreserved(c) || (keep_slash && c == '/')) {
      out->push_back(ch);
    } else {
      out->push_back('%');
      out->push_back(kHex[c >> 4]);
      out->push_back(kHex[c & 15]);
    }
  }
}

// ---- Canonical request parts -----------------------------------------------------------------

// Canonical URI for every service but S3: the path as sent, with "." and ".." segments resolved
// and empty segments dropped (RFC 3986 5.2.4 plus AWS's removal of consecutive slashes), then
// URI-encoded once more. Because the client percent-encoded the path once to send it, this is
// the "encode each segment twice" rule of the SigV4 documentation.
std::string CanonicalUri(std::string_view raw_path) {
  if (raw_path.empty()) return "/";
  std::vector<std::string_view> segments;
  size_t start = 0;
  while (start <= raw_path.size()) {
    size_t end = raw_path.find('/', start);
    if (end == std::string_view::npos) end = raw_path.size();
    std::string_view segment = raw_path.substr(start, end - start);
    if (segment == "..") {
      if (!segments.empty()) segments.pop_back();
    } else if (!segment.empty() && segment != ".") {
      segments.push_back(segment);
    }
    start = end + 1;
  }
  std::string normalized;
  normalized.reserve(raw_path.size());
  if (raw_path.front() == '/') normalized.push_back('/');
  for (size_t i = 0; i < segments.size(); ++i) {
    if (i) normalized.push_back('/');
    normalized.append(segments[i]);
  }
  if (raw_path.back() == '/' && !segments.empty()) normalized.push_back('/');

  std::string out;
  out.reserve(normalized.size() + 8);
  AppendUriEncoded(&out, normalized, /*keep_slash=*/true);
  return out;
}

struct QueryParam {
  std::string key;    // decoded
  std::string value;  // decoded
};

std::vector<QueryParam> ParseQuery(std::string_view raw) {
  std::vector<QueryParam> params;
  size_t start = 0;
  while (start < raw.size()) {
    size_t end = raw.find('&', start);
    if (end == std::string_view::npos) end = raw.size();
    std::string_view pair = raw.substr(start, end - start);
    if (!pair.empty()) {
      size_t eq = pair.find('=');
      if (eq == std::string_view::npos) {
        params.push_back({PercentDecode(pair), std::string()});
      } else {
        params.push_back({PercentDecode(pair.substr(0, eq)), PercentDecode(pair.substr(eq + 1))});
      }
    }
    start = end + 1;
  }
  return params;
}

const std::string* FindParam(const std::vector<QueryParam>& params, std::string_view key) {
  for (const QueryParam& p : params) {
    if (p.key == key) return &p.value;
  }
  return nullptr;
}

// Each name and value re-encoded the SigV4 way (so the client's choice of escapes does not
// matter), sorted by name then value, joined as name=value with '&'.
std::string CanonicalQueryString(const std::vector<QueryParam>& params, bool drop_signature) {
  std::vector<std::pair<std::string, std::string>> encoded;
  encoded.reserve(params.size());
  for (const QueryParam& p : params) {
    if (drop_signature && p.key == "X-Amz-Signature") continue;
    std::pair<std::string, std::string> e;
    AppendUriEncoded(&e.first, p.key, /*keep_slash=*/false);
    AppendUriEncoded(&e.second, p.value, /*keep_slash=*/false);
    encoded.push_back(std::move(e));
  }
  std::sort(encoded.begin(), encoded.end());
  std::string out;
  for (size_t i = 0; i < encoded.size(); ++i) {
    if (i) out.push_back('&');
    out += encoded[i].first;
    out.push_back('=');
    out += encoded[i].second;
  }
  return out;
}

std::vector<std::string_view> HeaderValues(const HttpRequestView& request,
                                           std::string_view name) {
  std::vector<std::string_view> values;
  for (const auto& [key, value] : request.headers) {
    if (EqualsIgnoreCase(key, name)) values.push_back(value);
  }
  return values;
}

std::optional<std::string_view> FirstHeader(const HttpRequestView& request,
                                            std::string_view name) {
  for (const auto& [key, value] : request.headers) {
    if (EqualsIgnoreCase(key, name)) return TrimView(value);
  }
  return std::nullopt;
}

// ---- Time ------------------------------------------------------------------------------------

bool ParseDigits(std::string_view s, int* out) {
  if (s.empty()) return false;
  int v = 0;
  for (char c : s) {
    if (c < '0' || c > '9') return false;
    v = v * 10 + (c - '0');
  }
  *out = v;
  return true;
}

bool ToEpochSeconds(int year, int month, int day, int hour, int minute, int second,
                    int64_t* out) {
  using namespace std::chrono;
  if (hour > 23 || minute > 59 || second > 59) return false;
  year_month_day ymd{std::chrono::year{year}, std::chrono::month{static_cast<unsigned>(month)},
                     std::chrono::day{static_cast<unsigned>(day)}};
  if (!ymd.ok()) return false;
  int64_t days = sys_days{ymd}.time_since_epoch().count();
  *out = days * 86400 + hour * 3600 + minute * 60 + second;
  return true;
}

// ISO-8601 basic format, UTC: yyyymmddThhmmssZ.
bool ParseIsoBasic(std::string_view s, int64_t* out) {
  if (s.size() != 16 || s[8] != 'T' || s[15] != 'Z') return false;
  int y, mo, d, h, mi, se;
  if (!ParseDigits(s.substr(0, 4), &y) || !ParseDigits(s.substr(4, 2), &mo) ||
      !ParseDigits(s.substr(6, 2), &d) || !ParseDigits(s.substr(9, 2), &h) ||
      !ParseDigits(s.substr(11, 2), &mi) || !ParseDigits(s.substr(13, 2), &se)) {
    return false;
  }
  return ToEpochSeconds(y, mo, d, h, mi, se, out);
}

// The HTTP Date header: "Sun, 30 Aug 2015 12:36:00 GMT" (RFC 7231), also with a "+0000" or
// "-0000" zone as Python's email.utils.formatdate writes it (botocore signs with that).
bool ParseHttpDate(std::string_view s, int64_t* out) {
  size_t comma = s.find(',');
  if (comma != std::string_view::npos) s = TrimView(s.substr(comma + 1));
  std::vector<std::string_view> tokens;
  while (!s.empty()) {
    size_t sp = s.find(' ');
    std::string_view token = s.substr(0, sp);
    if (!token.empty()) tokens.push_back(token);
    if (sp == std::string_view::npos) break;
    s.remove_prefix(sp + 1);
  }
  if (tokens.size() != 5) return false;
  static constexpr std::string_view kMonths[] = {"Jan", "Feb", "Mar", "Apr", "May", "Jun",
                                                 "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"};
  int month = 0;
  for (int i = 0; i < 12; ++i) {
    if (EqualsIgnoreCase(tokens[1], kMonths[i])) month = i + 1;
  }
  std::string_view zone = tokens[4];
  if (month == 0 || tokens[2].size() != 4 || tokens[3].size() != 8 || tokens[3][2] != ':' ||
      tokens[3][5] != ':' || tokens[0].size() > 2 ||
      !(zone == "GMT" || zone == "UTC" || zone == "UT" || zone == "Z" || zone == "+0000" ||
        zone == "-0000")) {
    return false;
  }
  int d, y, h, mi, se;
  if (!ParseDigits(tokens[0], &d) || !ParseDigits(tokens[2], &y) ||
      !ParseDigits(tokens[3].substr(0, 2), &h) || !ParseDigits(tokens[3].substr(3, 2), &mi) ||
      !ParseDigits(tokens[3].substr(6, 2), &se)) {
    return false;
  }
  return ToEpochSeconds(y, month, d, h, mi, se, out);
}

std::string FormatIsoBasic(int64_t epoch_seconds) {
  using namespace std::chrono;
  sys_seconds tp{seconds{epoch_seconds}};
  sys_days day = floor<days>(tp);
  year_month_day ymd{day};
  hh_mm_ss<seconds> hms{tp - day};
  int year = static_cast<int>(ymd.year());
  if (year >= 0 && year <= 9999) {
    // What the snprintf below writes, without its cost (this runs twice per request).
    char out[16];
    auto put = [&out](int at, unsigned value, int digits) {
      for (int i = digits - 1; i >= 0; --i, value /= 10) out[at + i] = static_cast<char>('0' + value % 10);
    };
    put(0, static_cast<unsigned>(year), 4);
    put(4, static_cast<unsigned>(ymd.month()), 2);
    put(6, static_cast<unsigned>(ymd.day()), 2);
    out[8] = 'T';
    put(9, static_cast<unsigned>(hms.hours().count()), 2);
    put(11, static_cast<unsigned>(hms.minutes().count()), 2);
    put(13, static_cast<unsigned>(hms.seconds().count()), 2);
    out[15] = 'Z';
    return std::string(out, sizeof(out));
  }
  char buf[32];
  std::snprintf(buf, sizeof(buf), "%04d%02u%02uT%02d%02d%02dZ", static_cast<int>(ymd.year()),
                static_cast<unsigned>(ymd.month()), static_cast<unsigned>(ymd.day()),
                static_cast<int>(hms.hours().count()), static_cast<int>(hms.minutes().count()),
                static_cast<int>(hms.seconds().count()));
  return buf;
}

std::string FormatSpan(int64_t seconds) {
  if (seconds % 60 == 0) return std::to_string(seconds / 60) + " min.";
  return std::to_string(seconds) + " sec.";
}

int64_t FloorDiv(int64_t a, int64_t b) { return a / b - ((a % b != 0) && ((a < 0) != (b < 0))); }

// ---- Parsing the two auth forms --------------------------------------------------------------

// What the client claims, from either the Authorization header or the presigned query.
struct SignatureClaim {
  bool presigned = false;
  std::string credential;      // AKID/yyyymmdd/region/service/aws4_request
  std::string signed_headers;  // "host;x-amz-date", as sent
  std::string signature;       // hex
  std::string timestamp;       // request time in ISO-8601 basic format, as signed
  int64_t time = 0;            // the same, seconds since the epoch
  std::optional<int64_t> expires;  // X-Amz-Expires, presigned only
};

// Reads the request time from X-Amz-Date, else Date. The caller has checked one is present.
Status ReadHeaderTime(const HttpRequestView& request, SignatureClaim* claim) {
  if (std::optional<std::string_view> amz_date = FirstHeader(request, "x-amz-date")) {
    if (!ParseIsoBasic(*amz_date, &claim->time)) {
      return Incomplete("Date must be in ISO-8601 'basic format'. Got '" + Echo(*amz_date) +
                        "'. See http://en.wikipedia.org/wiki/ISO_8601");
    }
  } else {
    std::string_view date = FirstHeader(request, "date").value_or("");
    if (!ParseIsoBasic(date, &claim->time) && !ParseHttpDate(date, &claim->time)) {
      return Incomplete("Date must be in ISO-8601 'basic format' or RFC 7231 format. Got '" +
                        Echo(date) + "'. See http://en.wikipedia.org/wiki/ISO_8601");
    }
  }
  claim->timestamp = FormatIsoBasic(claim->time);
  return Status::OK();
}

Result<SignatureClaim> ParseAuthorizationHeader(const HttpRequestView& request,
                                                std::string_view header) {
  header = TrimView(header);
  std::string_view algorithm = header.substr(0, header.find(' '));
  if (algorithm != kAlgorithm || header.size() == algorithm.size()) {
    return Incomplete("Authorization header must start with '" + std::string(kAlgorithm) +
                      " ', got '" + Echo(algorithm) + "'. Authorization=" + Echo(header));
  }
  std::string_view rest = header.substr(algorithm.size() + 1);

  std::optional<std::string_view> credential, signed_headers, signature;
  size_t start = 0;
  while (start <= rest.size()) {
    size_t end = rest.find(',', start);
    if (end == std::string_view::npos) end = rest.size();
    std::string_view part = TrimView(rest.substr(start, end - start));
    start = end + 1;
    if (part.empty()) continue;
    size_t eq = part.find('=');
    if (eq == std::string_view::npos) {
      // AWS does not echo a malformed pair, which could be a secret pasted by mistake.
      Digest digest;
      std::string hashed = Sha256(header, &digest) ? Base64Encode(AsChars(digest)) : "";
      return Incomplete(
          "Invalid key=value pair (missing equal-sign) in Authorization header (hashed with "
          "SHA-256 and encoded with Base64): '" + hashed + "'.");
    }
    std::string_view key = TrimView(part.substr(0, eq));
    std::string_view value = TrimView(part.substr(eq + 1));
    std::optional<std::string_view>* slot = nullptr;
    if (key == "Credential") slot = &credential;
    if (key == "SignedHeaders") slot = &signed_headers;
    if (key == "Signature") slot = &signature;
    if (slot == nullptr) continue;  // unknown parameters are ignored
    if (slot->has_value()) {
      return Incomplete("Authorization header has more than one '" + std::string(key) +
                        "' parameter. Authorization=" + Echo(header));
    }
    *slot = value;
  }

  std::string missing;
  if (!credential || credential->empty()) {
    missing += "Authorization header requires 'Credential' parameter. ";
  }
  if (!signature || signature->empty()) {
    missing += "Authorization header requires 'Signature' parameter. ";
  }
  if (!signed_headers || signed_headers->empty()) {
    missing += "Authorization header requires 'SignedHeaders' parameter. ";
  }
  if (!FirstHeader(request, "x-amz-date") && !FirstHeader(request, "date")) {
    missing +=
        "Authorization header requires existence of either a 'X-Amz-Date' or a 'Date' header. ";
  }
  if (!missing.empty()) return Incomplete(missing + "Authorization=" + Echo(header));

  SignatureClaim claim;
  claim.credential = std::string(*credential);
  claim.signed_headers = std::string(*signed_headers);
  claim.signature = std::string(*signature);
  OG_RETURN_NOT_OK(ReadHeaderTime(request, &claim));
  return claim;
}

Result<SignatureClaim> ParsePresignedQuery(const std::vector<QueryParam>& params) {
  const std::string* algorithm = FindParam(params, "X-Amz-Algorithm");
  if (algorithm == nullptr || *algorithm != kAlgorithm) {
    return Incomplete("X-Amz-Algorithm only supports '" + std::string(kAlgorithm) + "', got '" +
                      Echo(algorithm ? *algorithm : "") + "'.");
  }
  const std::string* credential = FindParam(params, "X-Amz-Credential");
  const std::string* signature = FindParam(params, "X-Amz-Signature");
  const std::string* signed_headers = FindParam(params, "X-Amz-SignedHeaders");
  const std::string* date = FindParam(params, "X-Amz-Date");
  std::string missing;
  auto require = [&missing](const std::string* value, std::string_view name) {
    if (value == nullptr || value->empty()) {
      missing += "AWS query-string parameters must include '" + std::string(name) + "'. ";
    }
  };
  require(credential, "X-Amz-Credential");
  require(signature, "X-Amz-Signature");
  require(signed_headers, "X-Amz-SignedHeaders");
  require(date, "X-Amz-Date");
  if (!missing.empty()) return Incomplete(missing + "Re-examine the query-string parameters.");

  SignatureClaim claim;
  claim.presigned = true;
  claim.credential = *credential;
  claim.signed_headers = *signed_headers;
  claim.signature = *signature;
  if (!ParseIsoBasic(*date, &claim.time)) {
    return Incomplete("Date must be in ISO-8601 'basic format'. Got '" + Echo(*date) +
                      "'. See http://en.wikipedia.org/wiki/ISO_8601");
  }
  claim.timestamp = *date;
  if (const std::string* expires = FindParam(params, "X-Amz-Expires")) {
    int64_t seconds = 0;
    bool digits = !expires->empty() && expires->size() <= 9 &&
                  std::all_of(expires->begin(), expires->end(),
                              [](char c) { return c >= '0' && c <= '9'; });
    if (!digits) {
      return Incomplete("X-Amz-Expires should be a number of seconds, got '" + Echo(*expires) +
                        "'.");
    }
    seconds = std::stoll(*expires);
    if (seconds > kMaxPresignedExpires) {
      return Incomplete("X-Amz-Expires must be less than a week (in seconds) that is 604800");
    }
    claim.expires = seconds;
  }
  return claim;
}

bool IsScopeName(std::string_view s) {
  if (s.empty()) return false;
  for (char c : s) {
    bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
              c == '-' || c == '_' || c == '.';
    if (!ok) return false;
  }
  return true;
}

struct Scope {
  std::string access_key_id;
  std::string date;
  std::string region;
  std::string service;
};

Result<Scope> ParseScope(std::string_view credential, bool presigned) {
  std::string_view name = presigned ? "X-Amz-Credential" : "Credential";
  std::vector<std::string> parts = Split(credential, '/');
  if (parts.size() != 5) {
    return Incomplete("'" + std::string(name) +
                      "' must have the form <AccessKeyId>/<yyyymmdd>/<region>/<service>/" +
                      std::string(kTerminator) + ", got '" + Echo(credential) + "'.");
  }
  Scope scope{parts[0], parts[1], parts[2], parts[3]};
  if (scope.access_key_id.empty()) {
    return Incomplete("Credential should start with an access key id, got '" + Echo(credential) +
                      "'.");
  }
  int ignored;
  if (scope.date.size() != 8 || !ParseDigits(scope.date, &ignored)) {
    return Incomplete("Credential should be scoped to a valid date in yyyymmdd format, not '" +
                      Echo(scope.date) + "'.");
  }
  if (!IsScopeName(scope.region)) {
    return Incomplete("Credential should be scoped to a valid region, not '" + Echo(scope.region) +
                      "'.");
  }
  if (!IsScopeName(scope.service)) {
    return Incomplete("Credential should be scoped to a valid service, not '" +
                      Echo(scope.service) + "'.");
  }
  if (parts[4] != kTerminator) {
    return Incomplete("Credential should be scoped with a valid terminator: '" +
                      std::string(kTerminator) + "', not '" + Echo(parts[4]) + "'.");
  }
  return scope;
}

}  // namespace

SigV4Verifier::SigV4Verifier(std::map<std::string, std::string> credentials, const Clock* clock,
                             int max_skew_seconds)
    : credentials_(std::move(credentials)),
      clock_(clock),
      max_skew_seconds_(std::max(max_skew_seconds, 0)) {}

Result<SigV4Verifier::KeyBytes> SigV4Verifier::SigningKey(const CacheKey& scope,
                                                          std::string_view secret) const {
  {
    MutexLock lock(&cache_mutex_);
    auto it = key_cache_.find(scope);
    if (it != key_cache_.end()) return it->second;
  }
  // Derived outside the lock: four HMACs are cheap, and concurrent misses just repeat them.
  std::string seed = "AWS4";
  seed.append(secret);
  KeyBytes k_date, k_region, k_service, k_signing;
  const auto& [access_key_id, date, region, service] = scope;
  bool ok = HmacSha256(reinterpret_cast<const unsigned char*>(seed.data()), seed.size(), date,
                       &k_date) &&
            HmacSha256(k_date.data(), k_date.size(), region, &k_region) &&
            HmacSha256(k_region.data(), k_region.size(), service, &k_service) &&
            HmacSha256(k_service.data(), k_service.size(), kTerminator, &k_signing);
  OPENSSL_cleanse(seed.data(), seed.size());
  if (!ok) return Status::Internal("HMAC-SHA256 failed while deriving the SigV4 signing key");
  return k_signing;
}

void SigV4Verifier::CacheSigningKey(CacheKey scope, const KeyBytes& key) const {
  MutexLock lock(&cache_mutex_);
  if (key_cache_.size() >= kMaxCachedKeys) key_cache_.clear();
  key_cache_.emplace(std::move(scope), key);
}

struct SigV4Verifier::Prepared {
  SignatureClaim claim;
  Scope scope;
  std::vector<std::string> signed_names;
  std::vector<std::vector<std::string_view>> signed_values;
  std::string secret;
};

Status SigV4Verifier::Prepare(const HttpRequestView& request, Prepared* out) const {
  // 1. Which auth form, and what does the client claim?
  std::vector<std::string_view> authorization = HeaderValues(request, "authorization");
  std::vector<QueryParam> params = ParseQuery(request.query);
  bool has_query_auth = FindParam(params, "X-Amz-Algorithm") != nullptr;
  if (authorization.empty() && !has_query_auth) return MissingToken();
  if (!authorization.empty() && has_query_auth) {
    return Incomplete(
        "Only one auth mechanism allowed; only the X-Amz-Algorithm query parameter, Signature "
        "query string parameter or the Authorization header should be specified");
  }
  if (authorization.size() > 1) {
    return Incomplete("The request has more than one Authorization header.");
  }
  OG_ASSIGN_OR_RETURN(out->claim,
                   has_query_auth ? ParsePresignedQuery(params)
                                  : ParseAuthorizationHeader(request, authorization.front()));
  const SignatureClaim& claim = out->claim;

  // 2. The credential scope, and its consistency with the request time.
  OG_ASSIGN_OR_RETURN(out->scope, ParseScope(claim.credential, claim.presigned));
  const Scope& scope = out->scope;
  std::string_view request_day = std::string_view(claim.timestamp).substr(0, 8);
  if (scope.date != request_day) {
    return Invalid("Date in Credential scope does not match YYYYMMDD from ISO-8601 version of "
                   "date from HTTP: '" + Echo(scope.date) + "' != '" + std::string(request_day) +
                   "', from '" + claim.timestamp + "'.");
  }

  // 3. The signed headers: well-formed, include host and the required ones, all present.
  out->signed_names = Split(claim.signed_headers, ';');
  std::vector<std::string>& signed_names = out->signed_names;
  bool host_signed = false;
  for (std::string& name : signed_names) {
    if (name.empty() || name != TrimView(name)) {
      return Incomplete("'SignedHeaders' must be a ';'-separated list of header names, got '" +
                        Echo(claim.signed_headers) + "'.");
    }
    name = ToLower(name);
    if (name == "host") host_signed = true;
  }
  if (!host_signed) {
    return Incomplete("'Host' or ':authority' must be a 'SignedHeader' in the AWS Authorization.");
  }
  // The time a header carries is signed too (AWS: "if you include a date or x-amz-date
  // header, you must also include that header in the list of signed headers").
  if (!claim.presigned) {
    std::string_view time_header = FirstHeader(request, "x-amz-date") ? "x-amz-date" : "date";
    if (std::find(signed_names.begin(), signed_names.end(), time_header) == signed_names.end()) {
      return Incomplete("'" + std::string(time_header) +
                        "' must be a 'SignedHeader' in the AWS Authorization.");
    }
  }
  // A required header that is present must be signed; one that is absent cannot be
  // retargeted (adding it later makes it present and unsigned).
  for (const std::string& required : required_signed_headers_) {
    if (!FirstHeader(request, required)) continue;
    if (std::find(signed_names.begin(), signed_names.end(), required) == signed_names.end()) {
      return Incomplete("'" + required + "' must be a 'SignedHeader' in the AWS Authorization.");
    }
  }
  out->signed_values.reserve(signed_names.size());
  for (const std::string& name : signed_names) {
    out->signed_values.push_back(HeaderValues(request, name));
    if (out->signed_values.back().empty()) {
      return Incomplete("The request lacks the header '" + Echo(name) +
                        "', which 'SignedHeaders' lists as signed.");
    }
  }

  // 4. Who signed, and when.
  if (auto configured = credentials_.find(scope.access_key_id); configured != credentials_.end()) {
    out->secret = configured->second;
  } else {
    MutexLock lock(&granted_mutex_);
    auto granted = granted_.find(scope.access_key_id);
    if (granted == granted_.end()) {
      return Status(StatusCode::kUnrecognizedClient,
                    "The security token included in the request is invalid.");
    }
    out->secret = granted->second;
  }
  int64_t now = FloorDiv(clock_->NowMillis(), 1000);
  int64_t past_window = claim.expires ? *claim.expires : max_skew_seconds_;
  if (claim.time < now - past_window) {
    return Invalid("Signature expired: " + claim.timestamp + " is now earlier than " +
                   FormatIsoBasic(now - past_window) + " (" + FormatIsoBasic(now) + " - " +
                   FormatSpan(past_window) + ")");
  }
  if (claim.time > now + max_skew_seconds_) {
    return Invalid("Signature not yet current: " + claim.timestamp + " is still later than " +
                   FormatIsoBasic(now + max_skew_seconds_) + " (" + FormatIsoBasic(now) + " + " +
                   FormatSpan(max_skew_seconds_) + ")");
  }
  return Status::OK();
}

Status SigV4Verifier::CheckHeaders(const HttpRequestView& request) const {
  Prepared prepared;
  return Prepare(request, &prepared);
}

Result<std::string> SigV4Verifier::Verify(const HttpRequestView& request) const {
  Prepared prepared;
  OG_RETURN_NOT_OK(Prepare(request, &prepared));
  const SignatureClaim& claim = prepared.claim;
  const Scope& scope = prepared.scope;
  const std::vector<std::string>& signed_names = prepared.signed_names;
  const std::vector<std::vector<std::string_view>>& signed_values = prepared.signed_values;
  const std::string& secret = prepared.secret;
  std::vector<QueryParam> params = ParseQuery(request.query);

  // 5. The payload hash. The body is always hashed: a client-supplied x-amz-content-sha256 is
  // signed, but only the real body hash proves the body was not replaced.
  Digest digest;
  if (!Sha256(request.body, &digest)) return Status::Internal("SHA-256 failed");
  std::string payload_hash = HexEncode(AsChars(digest));
  if (std::optional<std::string_view> declared = FirstHeader(request, "x-amz-content-sha256")) {
    if (*declared == kUnsignedPayload) {
      payload_hash = std::string(kUnsignedPayload);
    } else if (EqualsIgnoreCase(*declared, payload_hash)) {
      payload_hash = std::string(*declared);  // signed exactly as the client wrote it
    } else {
      return Invalid("The provided 'x-amz-content-sha256' header does not match what was "
                     "computed.");
    }
  }

  // 6. Canonical request, string to sign, signature.
  std::string canonical;
  canonical.reserve(512 + request.query.size() + request.path.size());
  canonical.append(request.method);
  canonical.push_back('\n');
  canonical += CanonicalUri(request.path);
  canonical.push_back('\n');
  canonical += CanonicalQueryString(params, claim.presigned);
  canonical.push_back('\n');
  for (size_t i = 0; i < signed_names.size(); ++i) {
    canonical += signed_names[i];
    canonical.push_back(':');
    for (size_t j = 0; j < signed_values[i].size(); ++j) {
      if (j) canonical.push_back(',');
      AppendTrimAll(&canonical, signed_values[i][j]);
    }
    canonical.push_back('\n');
  }
  canonical.push_back('\n');
  canonical += claim.signed_headers;
  canonical.push_back('\n');
  canonical += payload_hash;

  if (!Sha256(canonical, &digest)) return Status::Internal("SHA-256 failed");
  std::string string_to_sign;
  string_to_sign.reserve(160);
  string_to_sign.append(kAlgorithm);
  string_to_sign.push_back('\n');
  string_to_sign += claim.timestamp;
  string_to_sign.push_back('\n');
  string_to_sign += scope.date + "/" + scope.region + "/" + scope.service + "/";
  string_to_sign.append(kTerminator);
  string_to_sign.push_back('\n');
  string_to_sign += HexEncode(AsChars(digest));

  CacheKey cache_key{scope.access_key_id, scope.date, scope.region, scope.service};
  OG_ASSIGN_OR_RETURN(KeyBytes signing_key, SigningKey(cache_key, secret));
  if (!HmacSha256(signing_key.data(), signing_key.size(), string_to_sign, &digest)) {
    return Status::Internal("HMAC-SHA256 failed");
  }
  std::string expected = HexEncode(AsChars(digest));
  if (claim.signature.size() != expected.size() ||
      CRYPTO_memcmp(claim.signature.data(), expected.data(), expected.size()) != 0) {
    return Invalid(std::string(kMismatchMessage));
  }
  CacheSigningKey(std::move(cache_key), signing_key);
  return scope.access_key_id;
}

void SigV4Verifier::RequireSignedHeaders(std::vector<std::string> names) {
  for (std::string& name : names) name = ToLower(name);
  required_signed_headers_ = std::move(names);
}

void SigV4Verifier::Grant(const std::string& access_key_id, const std::string& secret) {
  MutexLock lock(&granted_mutex_);
  granted_[access_key_id] = secret;
}

void SigV4Verifier::Revoke(const std::string& access_key_id) {
  MutexLock lock(&granted_mutex_);
  granted_.erase(access_key_id);
}

}  // namespace openglue::api
