// AWS Signature Version 4 verification of incoming requests.
//
// boto3 and the AWS CLI sign every request with SigV4 (an HMAC-SHA256 over a canonical form of
// the request, keyed by a key derived from the secret access key, the date, the region and the
// service). SigV4Verifier recomputes that signature from the request as received and the secret
// it knows for the access key id, and accepts the request only if the two match and the request
// time is close to now. Both forms are accepted: the Authorization header
// ("AWS4-HMAC-SHA256 Credential=..., SignedHeaders=..., Signature=...") and the presigned-URL
// form (X-Amz-Algorithm, X-Amz-Credential, X-Amz-Date, X-Amz-SignedHeaders, X-Amz-Signature and
// optional X-Amz-Expires query parameters).
//
// The region and service of the credential scope are not checked against a configured value:
// the server answers to whatever region the client is configured for, and the scope is part of
// what is signed, so it cannot be altered without the secret.
#pragma once

#include <array>
#include <cstdint>
#include <map>
#include <mutex>
#include <string>
#include <string_view>
#include <tuple>
#include <utility>
#include <vector>

#include "common/clock.h"
#include "common/status.h"
#include "common/thread_annotations.h"

namespace openglue::api {

// A borrowed view of an HTTP request, as the server received it. Nothing is decoded or
// normalised beforehand: the verifier needs the bytes the client signed.
struct HttpRequestView {
  std::string_view method;  // "POST"
  std::string_view path;    // raw path as received, e.g. "/"; percent-encoding left as sent
  std::string_view query;   // raw query string without '?', may be empty
  // Header names in any case; a name may repeat (its values are then signed joined by ',').
  std::vector<std::pair<std::string, std::string>> headers;
  std::string_view body;
};

class SigV4Verifier {
 public:
  // `credentials` maps access key id -> secret access key. `clock` is borrowed and must outlive
  // the verifier. A request is accepted if its X-Amz-Date (or Date) lies within
  // now ± `max_skew_seconds` (negative values are treated as 0). For a presigned request with
  // X-Amz-Expires, the window is [date - max_skew_seconds, date + X-Amz-Expires].
  SigV4Verifier(std::map<std::string, std::string> credentials, const Clock* clock,
                int max_skew_seconds);

  SigV4Verifier(const SigV4Verifier&) = delete;
  SigV4Verifier& operator=(const SigV4Verifier&) = delete;

  // Verifies the request's SigV4 signature. Thread-safe. Never crashes on any input.
  //
  // On success returns the access key id that signed the request. Failures:
  //  - kMissingAuthenticationToken: neither an Authorization header nor an X-Amz-Algorithm
  //    query parameter ("Missing Authentication Token").
  //  - kIncompleteSignature: the Authorization header or the presigned query parameters are
  //    malformed (wrong algorithm, a missing Credential/SignedHeaders/Signature parameter, a
  //    credential scope that is not AKID/yyyymmdd/region/service/aws4_request, no X-Amz-Date or
  //    Date, a date not in ISO-8601 basic format, `host` not signed, a signed header absent from
  //    the request, both auth forms at once). The message names what is wrong.
  //  - kUnrecognizedClient: the access key id is unknown.
  //  - kInvalidSignature: the signature does not match (wrong secret, altered request), the
  //    x-amz-content-sha256 header does not match the body, the credential scope's date is not
  //    the request date, or the request time is outside the allowed window.
  Result<std::string> Verify(const HttpRequestView& request) const;

  // The checks of Verify that need no body (request.body is ignored): the auth form parses,
  // the signed headers are present (and include the required ones), the access key is known
  // (configured or granted), and the request time is within the allowed window. The HTTP server
  // runs this on a request's head, before it reads a body, so an unauthenticated client cannot
  // make the server buffer one. Returns the same failures as Verify, except for a signature
  // or payload-hash mismatch, which only Verify can see. Thread-safe.
  Status CheckHeaders(const HttpRequestView& request) const;

  // Headers (case-insensitive names) that a request must list among its SignedHeaders, in
  // addition to `host`, whenever it carries them; a request that carries one unsigned fails
  // with kIncompleteSignature. For the Glue
  // JSON protocol: content-type, x-amz-date and x-amz-target, so a captured request cannot be
  // replayed against another operation. Call before the verifier is shared between threads.
  void RequireSignedHeaders(std::vector<std::string> names);

  // Accepts (Grant) or stops accepting (Revoke) a temporary credential, such as the one a job
  // run uses to call back to the server. Thread-safe.
  void Grant(const std::string& access_key_id, const std::string& secret);
  void Revoke(const std::string& access_key_id);

 private:
  using KeyBytes = std::array<unsigned char, 32>;
  // (access key id, yyyymmdd, region, service).
  using CacheKey = std::tuple<std::string, std::string, std::string, std::string>;
  // Bounds the cache; on overflow it is cleared (entries are cheap to re-derive).
  static constexpr size_t kMaxCachedKeys = 1024;

  // What Prepare learns from a request's head.
  struct Prepared;
  // Steps of Verify that need no body; fills `out` on success.
  Status Prepare(const HttpRequestView& request, Prepared* out) const;

  // Returns the SigV4 signing key for the scope, derived from `secret`, or from the cache.
  // kInternal if OpenSSL fails.
  Result<KeyBytes> SigningKey(const CacheKey& scope, std::string_view secret) const;
  // Remembers a derived key. Called only after a signature made with it verified, so a client
  // without the secret cannot fill the cache with arbitrary scopes.
  void CacheSigningKey(CacheKey scope, const KeyBytes& key) const;

  // Immutable after construction, so an access key id determines its secret and the cache can
  // be keyed by the id rather than by the secret itself.
  const std::map<std::string, std::string> credentials_;
  const Clock* const clock_;
  const int64_t max_skew_seconds_;
  std::vector<std::string> required_signed_headers_;  // lowercase; set before use

  mutable Mutex granted_mutex_;
  std::map<std::string, std::string> granted_ GUARDED_BY(granted_mutex_);

  mutable Mutex cache_mutex_;
  mutable std::map<CacheKey, KeyBytes> key_cache_ GUARDED_BY(cache_mutex_);
};

}  // namespace openglue::api
