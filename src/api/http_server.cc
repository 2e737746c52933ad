#include "api/http_server.h"

#include <httplib.h>

#include <cstdio>

#include "common/logging.h"

namespace openglue::api {

HttpServer::HttpServer(const ServerConfig& config, const Router* router, const Clock* clock)
    : config_(config), router_(router) {
  verifier_ = std::make_unique<SigV4Verifier>(config.credentials, clock, config.max_clock_skew_seconds);
  server_ = std::make_unique<httplib::Server>();
}

HttpServer::~HttpServer() = default;

Result<std::unique_ptr<HttpServer>> HttpServer::Make(const ServerConfig& config, const Router* router,
                                                     const Clock* clock) {
  std::unique_ptr<HttpServer> server(new HttpServer(config, router, clock));
  int threads = config.http_threads;
  server->server_->new_task_queue = [threads] { return new httplib::ThreadPool(threads); };
  server->server_->set_keep_alive_max_count(1000000);
  server->server_->set_keep_alive_timeout(30);
  server->server_->set_payload_max_length(64ull << 20);
  server->server_->set_tcp_nodelay(true);

  HttpServer* self = server.get();
  server->server_->Post("/", [self](const httplib::Request& req, httplib::Response& res) {
    uint64_t id = ++self->request_counter_;
    char request_id[40];
    std::snprintf(request_id, sizeof(request_id), "%08llx-0000-4000-8000-%012llx",
                  static_cast<unsigned long long>(id >> 32), static_cast<unsigned long long>(id));
    res.set_header("x-amzn-RequestId", request_id);
    std::string target = req.get_header_value("X-Amz-Target");
    WireResponse out;
    bool authorized = true;
    if (self->config_.require_auth) {
      HttpRequestView view;
      view.method = req.method;
      view.path = req.target.empty() ? std::string_view(req.path) : std::string_view(req.target);
      size_t q = view.path.find('?');
      if (q != std::string_view::npos) {
        view.query = view.path.substr(q + 1);
        view.path = view.path.substr(0, q);
      }
      for (const auto& [name, value] : req.headers) view.headers.emplace_back(name, value);
      view.body = req.body;
      Result<std::string> who = self->verifier_->Verify(view);
      if (!who.ok()) {
        out = Router::ErrorResponse(who.status());
        authorized = false;
      }
    }
    if (authorized) out = self->router_->Handle(target, req.body);
    OG_LOG(kDebug, "POST " << target << " -> " << out.http_status);
    res.status = out.http_status;
    res.set_content(out.body, "application/x-amz-json-1.1");
  });
  server->server_->Get("/health", [](const httplib::Request&, httplib::Response& res) {
    res.set_content("{\"status\":\"ok\"}", "application/json");
  });
  return server;
}

Status HttpServer::Bind() {
  if (config_.port == 0) {
    port_ = server_->bind_to_any_port(config_.host);
    if (port_ <= 0) return Status::InvalidInput("cannot bind " + config_.host + " on any port");
  } else {
    if (!server_->bind_to_port(config_.host, config_.port))
      return Status::InvalidInput("cannot bind " + config_.host + ":" + std::to_string(config_.port) +
                                  " (in use, or not an address of this machine?)");
    port_ = config_.port;
  }
  return Status::OK();
}

Status HttpServer::Serve() {
  if (!server_->listen_after_bind()) return Status::Internal("the HTTP server stopped with an error");
  return Status::OK();
}

void HttpServer::Stop() { server_->stop(); }

}  // namespace openglue::api
