// HttpServer: the Glue wire protocol over HTTP/1.1 (keep-alive, many concurrent clients).
//
// Every POST / is authenticated with SigV4 (unless auth is off), then handed to the Router by
// its X-Amz-Target. Responses carry Content-Type application/x-amz-json-1.1 and an
// x-amzn-RequestId header, as AWS's do.
#pragma once

#include <atomic>
#include <memory>
#include <string>

#include "api/router.h"
#include "api/sigv4.h"
#include "common/clock.h"
#include "common/config.h"

namespace httplib {
class Server;
}

namespace openglue::api {

class HttpServer {
 public:
  // `router` and `clock` are borrowed and must outlive the server.
  static Result<std::unique_ptr<HttpServer>> Make(const ServerConfig& config, const Router* router,
                                                  const Clock* clock);
  ~HttpServer();

  // Binds the configured host and port (0 = a free port). InvalidInput if it cannot bind.
  Status Bind();
  int port() const { return port_; }
  // The request authenticator, for granting job runs their temporary credentials.
  SigV4Verifier* verifier() { return verifier_.get(); }
  // Serves until Stop() is called. Blocks.
  Status Serve();
  // Thread-safe; safe to call from another thread (not from a signal handler).
  void Stop();

 private:
  HttpServer(const ServerConfig& config, const Router* router, const Clock* clock);

  ServerConfig config_;
  const Router* router_;
  std::unique_ptr<SigV4Verifier> verifier_;
  std::unique_ptr<httplib::Server> server_;
  std::atomic<uint64_t> request_counter_{0};
  uint32_t request_id_prefix_ = 0;
  int port_ = 0;
};

}  // namespace openglue::api
