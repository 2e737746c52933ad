// HttpServer: the Glue wire protocol over HTTP/1.1 (keep-alive, pipelining, many clients).
//
// Every POST / is authenticated with SigV4 (unless auth is off), then handed to the Router by
// its X-Amz-Target. Responses carry Content-Type application/x-amz-json-1.1, an
// x-amzn-RequestId header and a Date header (the server's clock, from which the AWS SDKs
// correct a client's clock skew), as AWS's do. GET /health answers {"status":"ok"}.
//
// Design (docs/architecture.md, "api"): one reactor thread owns every socket (epoll,
// non-blocking, edge-triggered) and every connection's state: it accepts, reads, parses
// (api/http_parser.h), enforces the limits below and writes responses. A complete request is
// handed to a pool of `http_threads` workers, which verify the signature and run the handler,
// so a slow handler never holds up other connections. While a request is being handled its
// connection reads nothing more; pipelined requests wait in the buffer and are answered in
// order.
//
// Limits on clients (ServerConfig keys), all enforced before authentication:
//   http_header_timeout_seconds     the head must arrive within this time of its first byte
//   http_body_timeout_seconds       the body must arrive within this time of the head's end;
//                                   a response must be taken by the client within it too
//   http_keepalive_timeout_seconds  an idle connection (no request bytes) is closed after it
//   http_max_connections_per_client connections from one IP address; at the cap the oldest
//                                   idle connection of that address is closed to make room,
//                                   and if none is idle the new connection gets 503
//   http_max_body_bytes             the largest request body (413 beyond it)
// With auth on, a request's head must pass SigV4Verifier::CheckHeaders (auth header parses,
// access key known, date within skew, content-type and x-amz-target signed) before the body
// is read; failures are answered and the connection closed without reading the body.
#pragma once

#include <atomic>
#include <memory>
#include <string>

#include "api/router.h"
#include "api/sigv4.h"
#include "common/clock.h"
#include "common/config.h"
#include "common/random.h"

namespace openglue::api {

class HttpServer {
 public:
  // `router` and `clock` are borrowed and must outlive the server. `random` (borrowed; null =
  // the system CSPRNG) seeds the request ids.
  static Result<std::unique_ptr<HttpServer>> Make(const ServerConfig& config, const Router* router,
                                                  const Clock* clock, Random* random = nullptr);
  ~HttpServer();

  // Binds the configured host and port (0 = a free port) and listens. InvalidInput if it
  // cannot bind.
  Status Bind();
  int port() const { return port_; }
  // The request authenticator, for granting job runs their temporary credentials.
  SigV4Verifier* verifier() { return verifier_.get(); }
  // Serves until Stop() is called. Blocks. Returns after every connection is closed and every
  // worker has finished the request it was handling.
  Status Serve();
  // Thread-safe; safe to call from another thread (not from a signal handler), before or
  // during Serve().
  void Stop();

  class Impl;

 private:
  HttpServer() = default;

  std::unique_ptr<Impl> impl_;
  std::unique_ptr<SigV4Verifier> verifier_;
  int port_ = 0;
};

}  // namespace openglue::api
