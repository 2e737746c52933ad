#include "api/http_server.h"

#include <httplib.h>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>

#include <algorithm>
#include <condition_variable>
#include <cstdio>
#include <deque>
#include <filesystem>
#include <functional>
#include <mutex>
#include <random>
#include <thread>
#include <vector>

#include "common/logging.h"

namespace openglue::api {
namespace {

// The most connections served at once; beyond it a new connection waits for a free thread.
constexpr size_t kMaxConnectionThreads = 1024;

// httplib gives each connection one worker for the connection's whole life, idle keep-alive
// time included. With a fixed pool of N threads the N+1st client (boto3 keeps its connections
// open) would wait until some idle connection timed out. This pool starts `min_threads` up
// front and another whenever a connection arrives while none is free, up to `max_threads`.
class GrowingThreadPool : public httplib::TaskQueue {
 public:
  GrowingThreadPool(size_t min_threads, size_t max_threads) : max_threads_(max_threads) {
    std::lock_guard<std::mutex> lock(mutex_);
    for (size_t i = 0; i < min_threads; ++i) StartWorker();
  }
  ~GrowingThreadPool() override { shutdown(); }

  void enqueue(std::function<void()> fn) override {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      jobs_.push_back(std::move(fn));
      if (idle_ < jobs_.size() && workers_.size() < max_threads_) StartWorker();
    }
    cond_.notify_one();
  }

  // Runs the jobs already queued, then joins every worker.
  void shutdown() override {
    std::vector<std::thread> workers;
    {
      std::lock_guard<std::mutex> lock(mutex_);
      shutdown_ = true;
      workers.swap(workers_);
    }
    cond_.notify_all();
    for (std::thread& worker : workers) worker.join();
  }

 private:
  void StartWorker() { workers_.emplace_back([this] { Work(); }); }  // mutex_ held

  void Work() {
    while (true) {
      std::function<void()> job;
      {
        std::unique_lock<std::mutex> lock(mutex_);
        ++idle_;
        cond_.wait(lock, [this] { return shutdown_ || !jobs_.empty(); });
        --idle_;
        if (jobs_.empty()) return;  // shut down and nothing left to do
        job = std::move(jobs_.front());
        jobs_.pop_front();
      }
      job();
    }
  }

  const size_t max_threads_;
  std::mutex mutex_;
  std::condition_variable cond_;
  std::deque<std::function<void()>> jobs_;  // GUARDED_BY(mutex_)
  std::vector<std::thread> workers_;        // GUARDED_BY(mutex_)
  size_t idle_ = 0;                         // GUARDED_BY(mutex_)
  bool shutdown_ = false;                   // GUARDED_BY(mutex_)
};

}  // namespace

HttpServer::HttpServer(const ServerConfig& config, const Router* router, const Clock* clock)
    : config_(config), router_(router) {
  verifier_ = std::make_unique<SigV4Verifier>(config.credentials, clock, config.max_clock_skew_seconds);
  request_id_prefix_ = static_cast<uint32_t>(std::random_device{}());
  server_ = std::make_unique<httplib::Server>();
}

HttpServer::~HttpServer() = default;

Result<std::unique_ptr<HttpServer>> HttpServer::Make(const ServerConfig& config, const Router* router,
                                                     const Clock* clock) {
  std::unique_ptr<HttpServer> server(new HttpServer(config, router, clock));
  int threads = config.http_threads;
  server->server_->new_task_queue = [threads] {
    return new GrowingThreadPool(threads, std::max(kMaxConnectionThreads, static_cast<size_t>(threads)));
  };
  server->server_->set_keep_alive_max_count(1000000);
  server->server_->set_keep_alive_timeout(30);
  server->server_->set_payload_max_length(64ull << 20);
  server->server_->set_tcp_nodelay(true);

  HttpServer* self = server.get();
  server->server_->Post("/", [self](const httplib::Request& req, httplib::Response& res) {
    uint64_t id = ++self->request_counter_;
    // A per-process random prefix keeps ids unique across server restarts.
    char request_id[40];
    std::snprintf(request_id, sizeof(request_id), "%08x-%04llx-4000-8000-%012llx",
                  self->request_id_prefix_, static_cast<unsigned long long>((id >> 48) & 0xFFFF),
                  static_cast<unsigned long long>(id & 0xFFFFFFFFFFFFULL));
    res.set_header("x-amzn-RequestId", request_id);
    std::string target = req.get_header_value("X-Amz-Target");
    WireResponse out;
    bool authorized = true;
    std::string principal;
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
      } else {
        principal = *who;
      }
    }
    if (authorized) out = self->router_->Handle(target, req.body, principal);
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

namespace {

// The local port of socket `fd` if it is a connected TCP socket (not a listener), else -1.
int ConnectedLocalPort(int fd) {
  sockaddr_storage local{}, peer{};
  socklen_t local_len = sizeof(local), peer_len = sizeof(peer);
  if (getsockname(fd, reinterpret_cast<sockaddr*>(&local), &local_len) != 0) return -1;
  if (getpeername(fd, reinterpret_cast<sockaddr*>(&peer), &peer_len) != 0) return -1;
  if (local.ss_family == AF_INET) return ntohs(reinterpret_cast<sockaddr_in*>(&local)->sin_port);
  if (local.ss_family == AF_INET6) return ntohs(reinterpret_cast<sockaddr_in6*>(&local)->sin6_port);
  return -1;
}

}  // namespace

void HttpServer::Stop() {
  server_->stop();
  // httplib's workers wait out the whole keep-alive timeout on an idle keep-alive connection
  // before they notice the stop, so a client holding a connection open (boto3's pool always
  // does) would delay shutdown by up to 30 s. Shutting the read side of every accepted
  // connection ends idle ones at once; a request being answered still writes its response.
  std::error_code ec;
  for (const auto& entry : std::filesystem::directory_iterator("/proc/self/fd", ec)) {
    int fd = -1;
    try {
      fd = std::stoi(entry.path().filename().string());
    } catch (const std::exception&) {
      continue;
    }
    if (port_ > 0 && ConnectedLocalPort(fd) == port_) ::shutdown(fd, SHUT_RD);
  }
}

}  // namespace openglue::api
