#include "api/http_server.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <deque>
#include <optional>
#include <thread>
#include <unordered_map>
#include <vector>

#include "api/http_parser.h"
#include "api/query_protocol.h"
#include "common/logging.h"
#include "common/strings.h"
#include "common/thread_annotations.h"

namespace openglue::api {
namespace {

constexpr uint64_t kListenerTag = 0;
constexpr uint64_t kWakeTag = 1;
constexpr uint64_t kFirstConnectionId = 2;
// File descriptors kept free for everything else the server opens (SQLite, logs, job pipes).
constexpr int kReservedFds = 256;
// After answering a request whose body is not read (refused before authentication, a parse
// error), the server stops writing and discards what the client still sends for a short while
// before it closes, so the client reads the answer instead of a reset.
constexpr int64_t kLingerMillis = 2000;
constexpr size_t kLingerBytes = 1 << 20;
constexpr size_t kReadChunk = 64 * 1024;
constexpr const char* kJsonType = "application/x-amz-json-1.1";

int64_t NowMs() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

const char* Reason(int status) {
  switch (status) {
    case 100: return "Continue";
    case 200: return "OK";
    case 400: return "Bad Request";
    case 403: return "Forbidden";
    case 404: return "Not Found";
    case 405: return "Method Not Allowed";
    case 408: return "Request Timeout";
    case 413: return "Payload Too Large";
    case 417: return "Expectation Failed";
    case 431: return "Request Header Fields Too Large";
    case 500: return "Internal Server Error";
    case 501: return "Not Implemented";
    case 503: return "Service Unavailable";
    case 505: return "HTTP Version Not Supported";
    default: return "Unknown";
  }
}

// `date` is the Date header's value (RFC 9110 requires one from a server with a clock; the AWS
// SDKs correct their clock skew from it, see docs/clients.md).
std::string BuildResponse(int status, std::string_view content_type, std::string_view body,
                          std::string_view request_id, bool keep_alive, bool http10,
                          std::string_view date) {
  std::string out;
  out.reserve(body.size() + 240);
  out += "HTTP/1.1 ";
  out += std::to_string(status);
  out += ' ';
  out += Reason(status);
  out += "\r\nDate: ";
  out += date;
  out += "\r\nContent-Type: ";
  out += content_type;
  out += "\r\nContent-Length: ";
  out += std::to_string(body.size());
  if (!request_id.empty()) {
    out += "\r\nx-amzn-RequestId: ";
    out += request_id;
  }
  if (!keep_alive) out += "\r\nConnection: close";
  else if (http10) out += "\r\nConnection: keep-alive";
  out += "\r\n\r\n";
  out += body;
  return out;
}

// A Glue error body for a refusal by the HTTP layer itself.
std::string ErrorBody(std::string_view type, std::string_view message) {
  Json body{{"__type", std::string(type)}, {"message", std::string(message)}};
  return DumpJson(body);
}

std::string_view ErrorTypeForStatus(int status) {
  switch (status) {
    case 413: return "RequestEntityTooLargeException";
    case 404: return "UnknownOperationException";
    case 503: return "ThrottlingException";
    default: return "SerializationException";
  }
}

}  // namespace

// ---- Impl ------------------------------------------------------------------------------------

class HttpServer::Impl {
 public:
  Impl(const ServerConfig& config, const Router* router, SigV4Verifier* verifier,
       const Clock* clock, uint64_t request_id_seed)
      : config_(config), router_(router), verifier_(verifier), clock_(clock),
        id_seed_(request_id_seed) {
    limits_.max_body_bytes = static_cast<uint64_t>(config.http_max_body_bytes);
  }
  ~Impl();

  Status Bind(int* port);
  Status Serve();
  void Stop();

 private:
  enum class State { kHead, kBody, kHandling, kWriting, kLingering };

  struct Connection {
    uint64_t id = 0;
    int fd = -1;
    std::string address;  // the client's IP address
    State state = State::kHead;
    std::string in;       // received, not yet consumed
    size_t in_offset = 0;
    int64_t accepted_ms = 0;
    int64_t request_started_ms = 0;  // first byte of the current request's head; 0 = idle
    int64_t body_started_ms = 0;
    int64_t last_activity_ms = 0;
    HttpRequestHead head;
    std::optional<ChunkedDecoder> chunked;
    std::string body;
    std::string out;  // response bytes not yet written
    size_t out_offset = 0;
    bool close_after_write = false;
    bool broken = false;  // an error or hang-up seen while a worker had the request
    size_t lingered_bytes = 0;
    int64_t linger_until_ms = 0;
    bool pumping = false;  // Pump is on the stack for this connection
    bool closed = false;   // closed; the object lives in graveyard_ until the loop turns
  };

  // One request handed to the workers.
  struct Job {
    uint64_t connection_id;
    int fd;
    HttpRequestHead head;
    std::string body;
  };
  // A worker's answer; `sent` bytes of `response` are already written.
  struct Completion {
    uint64_t connection_id;
    std::string response;
    size_t sent;
    bool keep_alive;
  };

  // Reactor thread only.
  void Loop();
  void AcceptAll();
  // Reads and parses until the connection waits for the client, a worker or the socket.
  void Pump(Connection* c);
  void PumpLoop(Connection* c);
  // Parses what is buffered. True: more bytes are needed; false: the state changed.
  bool ProcessBuffered(Connection* c);
  void StartRequest(Connection* c);
  void Dispatch(Connection* c);
  void Respond(Connection* c, int status, std::string_view type, std::string_view message,
               bool close);
  void QueueOutput(Connection* c, std::string bytes, size_t sent, bool close);
  void OnWritable(Connection* c);
  void FinishResponse(Connection* c);
  void Linger(Connection* c);
  void Close(Connection* c);
  void HandleCompletions();
  void Sweep(int64_t now);
  Connection* OldestIdle(const std::string* address);
  std::string NextRequestId();
  // The Date header's value now (the server's clock; any thread).
  std::string Date() const { return FormatHttpDate(clock_->NowMillis() / 1000); }

  // Worker threads.
  void Work();
  Completion Handle(Job& job);

  const ServerConfig config_;
  const Router* const router_;
  SigV4Verifier* const verifier_;
  const Clock* const clock_;
  HttpLimits limits_;
  const uint64_t id_seed_;
  std::atomic<uint64_t> request_counter_{0};

  int listen_fd_ = -1;
  int epoll_fd_ = -1;
  int wake_fd_ = -1;
  int spare_fd_ = -1;  // closed to accept-and-drop when out of descriptors
  size_t max_connections_ = 1024;
  std::atomic<bool> stopping_{false};

  // Reactor-owned.
  std::unordered_map<uint64_t, std::unique_ptr<Connection>> connections_;
  std::unordered_map<std::string, int> per_address_;
  // Closed connections, freed at the end of a loop turn so pointers held up the stack stay
  // valid.
  std::vector<std::unique_ptr<Connection>> graveyard_;
  uint64_t next_connection_id_ = kFirstConnectionId;
  char read_buffer_[kReadChunk];

  Mutex jobs_mutex_;
  CondVar jobs_cond_;
  std::deque<Job> jobs_ GUARDED_BY(jobs_mutex_);
  bool workers_stop_ GUARDED_BY(jobs_mutex_) = false;
  std::vector<std::thread> workers_;

  Mutex done_mutex_;
  std::vector<Completion> done_ GUARDED_BY(done_mutex_);
};

HttpServer::Impl::~Impl() {
  for (auto& [id, c] : connections_) ::close(c->fd);
  if (listen_fd_ >= 0) ::close(listen_fd_);
  if (epoll_fd_ >= 0) ::close(epoll_fd_);
  if (wake_fd_ >= 0) ::close(wake_fd_);
  if (spare_fd_ >= 0) ::close(spare_fd_);
}

Status HttpServer::Impl::Bind(int* port) {
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  hints.ai_flags = AI_PASSIVE | AI_NUMERICSERV;
  addrinfo* found = nullptr;
  std::string service = std::to_string(config_.port);
  if (getaddrinfo(config_.host.c_str(), service.c_str(), &hints, &found) != 0 || found == nullptr)
    return Status::InvalidInput("cannot resolve host '" + config_.host + "'");
  int fd = -1;
  for (addrinfo* ai = found; ai != nullptr && fd < 0; ai = ai->ai_next) {
    fd = ::socket(ai->ai_family, ai->ai_socktype | SOCK_NONBLOCK | SOCK_CLOEXEC, ai->ai_protocol);
    if (fd < 0) continue;
    int one = 1;
    setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
    // A backlog as large as the kernel allows (net.core.somaxconn), so a burst of connects
    // waits in the queue instead of being dropped and retried seconds later.
    if (::bind(fd, ai->ai_addr, ai->ai_addrlen) != 0 || ::listen(fd, SOMAXCONN) != 0) {
      ::close(fd);
      fd = -1;
    }
  }
  freeaddrinfo(found);
  if (fd < 0)
    return Status::InvalidInput("cannot bind " + config_.host + ":" + std::to_string(config_.port) +
                                " (in use, or not an address of this machine?)");
  listen_fd_ = fd;
  sockaddr_storage local{};
  socklen_t len = sizeof(local);
  getsockname(fd, reinterpret_cast<sockaddr*>(&local), &len);
  *port = local.ss_family == AF_INET6 ? ntohs(reinterpret_cast<sockaddr_in6*>(&local)->sin6_port)
                                      : ntohs(reinterpret_cast<sockaddr_in*>(&local)->sin_port);

  epoll_fd_ = epoll_create1(EPOLL_CLOEXEC);
  wake_fd_ = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
  spare_fd_ = ::open("/dev/null", O_RDONLY | O_CLOEXEC);
  if (epoll_fd_ < 0 || wake_fd_ < 0) return Status::Internal("cannot create epoll/eventfd");
  epoll_event ev{};
  ev.events = EPOLLIN;
  ev.data.u64 = kListenerTag;
  epoll_ctl(epoll_fd_, EPOLL_CTL_ADD, listen_fd_, &ev);
  ev.data.u64 = kWakeTag;
  epoll_ctl(epoll_fd_, EPOLL_CTL_ADD, wake_fd_, &ev);

  rlimit limit{};
  if (getrlimit(RLIMIT_NOFILE, &limit) == 0) {
    size_t fds = limit.rlim_cur == RLIM_INFINITY ? 1 << 20 : limit.rlim_cur;
    max_connections_ = fds > 2 * kReservedFds ? fds - kReservedFds : fds / 2;
  }
  return Status::OK();
}

Status HttpServer::Impl::Serve() {
  {
    MutexLock lock(&jobs_mutex_);
    workers_stop_ = false;
  }
  for (int i = 0; i < config_.http_threads; ++i) workers_.emplace_back([this] { Work(); });
  Loop();
  {
    MutexLock lock(&jobs_mutex_);
    workers_stop_ = true;
    jobs_.clear();
  }
  jobs_cond_.SignalAll();
  for (std::thread& t : workers_) t.join();
  workers_.clear();
  for (auto& [id, c] : connections_) ::close(c->fd);
  connections_.clear();
  per_address_.clear();
  graveyard_.clear();
  return Status::OK();
}

void HttpServer::Impl::Stop() {
  stopping_ = true;
  uint64_t one = 1;
  if (wake_fd_ >= 0) [[maybe_unused]] ssize_t n = ::write(wake_fd_, &one, sizeof(one));
}

std::string HttpServer::Impl::NextRequestId() {
  uint64_t n = ++request_counter_;
  // A random per-process prefix keeps ids unique across restarts.
  char id[48];
  std::snprintf(id, sizeof(id), "%08x-%04x-4%03x-8%03x-%012llx",
                static_cast<unsigned>(id_seed_ >> 32), static_cast<unsigned>((id_seed_ >> 16) & 0xFFFF),
                static_cast<unsigned>(id_seed_ & 0xFFF), static_cast<unsigned>((n >> 48) & 0xFFF),
                static_cast<unsigned long long>(n & 0xFFFFFFFFFFFFULL));
  return id;
}

void HttpServer::Impl::Loop() {
  std::vector<epoll_event> events(512);
  int64_t next_sweep = NowMs() + 250;
  while (!stopping_) {
    int64_t now = NowMs();
    int timeout = static_cast<int>(std::clamp<int64_t>(next_sweep - now, 0, 250));
    int n = epoll_wait(epoll_fd_, events.data(), static_cast<int>(events.size()), timeout);
    if (n < 0 && errno != EINTR) {
      OG_LOG(kError, "epoll_wait failed: " << std::strerror(errno));
      break;
    }
    for (int i = 0; i < n && !stopping_; ++i) {
      uint64_t tag = events[i].data.u64;
      if (tag == kListenerTag) {
        AcceptAll();
        continue;
      }
      if (tag == kWakeTag) {
        uint64_t value;
        while (::read(wake_fd_, &value, sizeof(value)) > 0) {
        }
        HandleCompletions();
        continue;
      }
      auto it = connections_.find(tag);
      if (it == connections_.end()) continue;
      Connection* c = it->second.get();
      uint32_t what = events[i].events;
      if (c->state == State::kHandling) {
        if (what & (EPOLLERR | EPOLLHUP)) c->broken = true;
        continue;  // the socket is the worker's until it answers
      }
      if (what & EPOLLERR) {
        Close(c);
        continue;
      }
      if ((what & EPOLLOUT) && c->state == State::kWriting) OnWritable(c);
      if ((what & (EPOLLIN | EPOLLRDHUP | EPOLLHUP)) && !c->closed) Pump(c);
    }
    now = NowMs();
    if (now >= next_sweep) {
      Sweep(now);
      next_sweep = now + 250;
    }
    graveyard_.clear();
  }
}

HttpServer::Impl::Connection* HttpServer::Impl::OldestIdle(const std::string* address) {
  Connection* oldest = nullptr;
  for (auto& [id, c] : connections_) {
    if (address != nullptr && c->address != *address) continue;
    bool idle = c->state == State::kHead && c->request_started_ms == 0 &&
                c->in_offset == c->in.size();
    if (idle && (oldest == nullptr ||
                 std::pair(c->last_activity_ms, c->id) < std::pair(oldest->last_activity_ms, oldest->id)))
      oldest = c.get();
  }
  return oldest;
}

void HttpServer::Impl::AcceptAll() {
  while (!stopping_) {
    sockaddr_storage peer{};
    socklen_t len = sizeof(peer);
    int fd = accept4(listen_fd_, reinterpret_cast<sockaddr*>(&peer), &len,
                     SOCK_NONBLOCK | SOCK_CLOEXEC);
    if (fd < 0) {
      if (errno == EINTR || errno == ECONNABORTED) continue;
      if ((errno == EMFILE || errno == ENFILE) && spare_fd_ >= 0) {
        // Out of descriptors: accept and drop one connection so the listener does not stay
        // readable forever, then keep the spare for next time.
        ::close(spare_fd_);
        int dropped = accept4(listen_fd_, nullptr, nullptr, SOCK_CLOEXEC);
        if (dropped >= 0) ::close(dropped);
        spare_fd_ = ::open("/dev/null", O_RDONLY | O_CLOEXEC);
        OG_LOG(kWarn, "out of file descriptors; a connection was refused");
        continue;
      }
      return;  // EAGAIN, or an error the next readiness will report again
    }
    char host[INET6_ADDRSTRLEN] = "?";
    if (peer.ss_family == AF_INET)
      inet_ntop(AF_INET, &reinterpret_cast<sockaddr_in*>(&peer)->sin_addr, host, sizeof(host));
    else if (peer.ss_family == AF_INET6)
      inet_ntop(AF_INET6, &reinterpret_cast<sockaddr_in6*>(&peer)->sin6_addr, host, sizeof(host));
    std::string address = host;

    // Make room: first within the client's own share, then within the server's.
    int& count = per_address_[address];
    if (count >= config_.http_max_connections_per_client) {
      if (Connection* idle = OldestIdle(&address)) Close(idle);
    }
    if (connections_.size() >= max_connections_) {
      if (Connection* idle = OldestIdle(nullptr)) Close(idle);
    }
    int& count_now = per_address_[address];  // Close may have erased the entry
    if (count_now >= config_.http_max_connections_per_client ||
        connections_.size() >= max_connections_) {
      std::string body = ErrorBody("ThrottlingException", "Too many connections from this client");
      std::string response = BuildResponse(503, kJsonType, body, "", false, false, Date());
      [[maybe_unused]] ssize_t sent = ::send(fd, response.data(), response.size(), MSG_NOSIGNAL);
      ::close(fd);
      if (count_now == 0) per_address_.erase(address);
      continue;
    }
    int one = 1;
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
    auto c = std::make_unique<Connection>();
    c->id = next_connection_id_++;
    c->fd = fd;
    c->address = std::move(address);
    c->accepted_ms = c->last_activity_ms = NowMs();
    epoll_event ev{};
    ev.events = EPOLLIN | EPOLLOUT | EPOLLRDHUP | EPOLLET;
    ev.data.u64 = c->id;
    if (epoll_ctl(epoll_fd_, EPOLL_CTL_ADD, fd, &ev) != 0) {
      ::close(fd);
      if (count_now == 0) per_address_.erase(c->address);
      continue;
    }
    ++count_now;
    Connection* raw = c.get();
    connections_.emplace(c->id, std::move(c));
    Pump(raw);  // data may have arrived with the handshake
  }
}

void HttpServer::Impl::Pump(Connection* c) {
  // Responses finished inside PumpLoop come back here; the outer loop carries on instead of
  // recursing once per pipelined request.
  if (c->pumping || c->closed) return;
  c->pumping = true;
  PumpLoop(c);
  c->pumping = false;
}

void HttpServer::Impl::PumpLoop(Connection* c) {
  while (!c->closed) {
    if (c->state == State::kLingering) {
      ssize_t n = ::recv(c->fd, read_buffer_, sizeof(read_buffer_), 0);
      if (n > 0) {
        c->lingered_bytes += static_cast<size_t>(n);
        if (c->lingered_bytes > kLingerBytes) Close(c);
        continue;
      }
      if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) return;
      if (n < 0 && errno == EINTR) continue;
      Close(c);
      return;
    }
    if (c->state == State::kHandling || c->state == State::kWriting) return;
    if (!ProcessBuffered(c)) continue;
    ssize_t n = ::recv(c->fd, read_buffer_, sizeof(read_buffer_), 0);
    if (n > 0) {
      int64_t now = NowMs();
      c->last_activity_ms = now;
      if (c->state == State::kHead && c->request_started_ms == 0) c->request_started_ms = now;
      // Drop what is consumed, and a large buffer once it is empty, so a connection holds
      // only what it has not parsed yet.
      if (c->in_offset == c->in.size() && c->in.capacity() > 2 * kReadChunk) {
        c->in = std::string();
      } else if (c->in_offset > 0) {
        c->in.erase(0, c->in_offset);
      }
      c->in_offset = 0;
      c->in.append(read_buffer_, static_cast<size_t>(n));
      continue;
    }
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) return;
    if (n < 0 && errno == EINTR) continue;
    Close(c);  // end of stream or an error; a partial request is dropped
    return;
  }
}

bool HttpServer::Impl::ProcessBuffered(Connection* c) {
  std::string_view data = std::string_view(c->in).substr(c->in_offset);
  if (c->state == State::kHead) {
    if (data.empty()) {
      c->request_started_ms = 0;  // idle until the next byte
      return true;
    }
    if (c->request_started_ms == 0) c->request_started_ms = NowMs();
    HttpParseError error;
    ParseResult r = ParseRequestHead(data, limits_, &c->head, &error);
    if (r == ParseResult::kIncomplete) return true;
    if (r == ParseResult::kError) {
      Respond(c, error.status, ErrorTypeForStatus(error.status), error.message, true);
      return false;
    }
    c->in_offset += c->head.head_bytes;
    StartRequest(c);
    return false;
  }
  if (c->state == State::kBody) {
    if (c->chunked) {
      size_t used = 0;
      HttpParseError error;
      ParseResult r = c->chunked->Decode(data, &used, &c->body, &error);
      c->in_offset += used;
      if (r == ParseResult::kError) {
        Respond(c, error.status, ErrorTypeForStatus(error.status), error.message, true);
        return false;
      }
      if (r == ParseResult::kIncomplete) return true;
    } else {
      size_t need = static_cast<size_t>(c->head.content_length) - c->body.size();
      size_t take = std::min(need, data.size());
      if (c->body.empty() && take == need) {
        c->body.assign(data.substr(0, take));
      } else {
        if (c->body.capacity() < c->head.content_length) c->body.reserve(c->head.content_length);
        c->body.append(data.substr(0, take));
      }
      c->in_offset += take;
      if (c->body.size() < c->head.content_length) return true;
    }
    Dispatch(c);
    return false;
  }
  return false;
}

void HttpServer::Impl::StartRequest(Connection* c) {
  const HttpRequestHead& head = c->head;
  std::string_view path = head.path();
  bool has_body = head.chunked || head.content_length > 0;
  if (head.method != "POST") {
    if ((head.method == "GET" || head.method == "HEAD") && path == "/health") {
      std::string body = "{\"status\":\"ok\"}";
      std::string response = BuildResponse(200, "application/json", body, "",
                                           head.keep_alive && !has_body, head.minor_version == 0,
                                           Date());
      if (head.method == "HEAD") response.resize(response.size() - body.size());
      QueueOutput(c, std::move(response), 0, !head.keep_alive || has_body);
      return;
    }
    Respond(c, path == "/" ? 405 : 404, "UnknownOperationException",
            path == "/" ? "Method not allowed" : "Not found", has_body);
    return;
  }
  if (path != "/") {
    Respond(c, 404, "UnknownOperationException", "Not found", true);
    return;
  }
  if (config_.require_auth) {
    // Authenticate what can be authenticated without the body, before reading it.
    HttpRequestView view;
    view.method = head.method;
    view.path = path;
    view.query = head.query();
    view.headers = head.headers;
    Status allowed = verifier_->CheckHeaders(view);
    if (!allowed.ok()) {
      // A small body that is already here is skipped, so the connection can stay open.
      size_t buffered = c->in.size() - c->in_offset;
      bool skip = !head.chunked && head.content_length <= buffered;
      if (skip) c->in_offset += static_cast<size_t>(head.content_length);
      WireResponse out = Router::ErrorResponse(allowed);
      bool keep = skip && head.keep_alive;
      QueueOutput(c, BuildResponse(out.http_status, kJsonType, out.body, NextRequestId(), keep,
                                   head.minor_version == 0, Date()),
                  0, !keep);
      return;
    }
  }
  c->state = State::kBody;
  c->body_started_ms = NowMs();
  c->body.clear();
  c->chunked.reset();
  if (head.chunked) c->chunked.emplace(limits_.max_body_bytes);
  if (head.expect_continue && c->in.size() == c->in_offset) {
    static constexpr std::string_view kContinue = "HTTP/1.1 100 Continue\r\n\r\n";
    [[maybe_unused]] ssize_t n = ::send(c->fd, kContinue.data(), kContinue.size(), MSG_NOSIGNAL);
  }
}

void HttpServer::Impl::Dispatch(Connection* c) {
  c->state = State::kHandling;
  Job job{c->id, c->fd, std::move(c->head), std::move(c->body)};
  c->head = HttpRequestHead();
  c->body = std::string();
  c->chunked.reset();
  {
    MutexLock lock(&jobs_mutex_);
    jobs_.push_back(std::move(job));
  }
  jobs_cond_.Signal();
}

void HttpServer::Impl::Respond(Connection* c, int status, std::string_view type,
                               std::string_view message, bool close) {
  bool http10 = c->head.minor_version == 0;
  bool keep = !close && c->head.keep_alive;
  QueueOutput(c, BuildResponse(status, kJsonType, ErrorBody(type, message), NextRequestId(), keep,
                               http10, Date()),
              0, !keep);
}

void HttpServer::Impl::QueueOutput(Connection* c, std::string bytes, size_t sent, bool close) {
  c->out = std::move(bytes);
  c->out_offset = sent;
  c->close_after_write = close;
  c->state = State::kWriting;
  c->last_activity_ms = NowMs();
  OnWritable(c);
}

void HttpServer::Impl::OnWritable(Connection* c) {
  while (c->out_offset < c->out.size()) {
    ssize_t n = ::send(c->fd, c->out.data() + c->out_offset, c->out.size() - c->out_offset,
                       MSG_NOSIGNAL);
    if (n > 0) {
      c->out_offset += static_cast<size_t>(n);
      c->last_activity_ms = NowMs();
      continue;
    }
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) return;  // wait for EPOLLOUT
    Close(c);
    return;
  }
  FinishResponse(c);
}

void HttpServer::Impl::FinishResponse(Connection* c) {
  c->out = std::string();
  c->out_offset = 0;
  if (c->close_after_write) {
    Linger(c);
    return;
  }
  c->state = State::kHead;
  c->head = HttpRequestHead();
  c->request_started_ms = 0;
  c->last_activity_ms = NowMs();
  if (c->in_offset == c->in.size()) {
    c->in = std::string();
    c->in_offset = 0;
  }
  Pump(c);  // a pipelined request may be waiting, in the buffer or the socket
}

void HttpServer::Impl::Linger(Connection* c) {
  ::shutdown(c->fd, SHUT_WR);
  c->state = State::kLingering;
  c->in = std::string();
  c->in_offset = 0;
  c->linger_until_ms = NowMs() + kLingerMillis;
  Pump(c);
}

void HttpServer::Impl::Close(Connection* c) {
  if (c->closed) return;
  c->closed = true;
  ::close(c->fd);  // also removes it from the epoll set
  auto count = per_address_.find(c->address);
  if (count != per_address_.end() && --count->second <= 0) per_address_.erase(count);
  auto it = connections_.find(c->id);
  if (it != connections_.end()) {
    graveyard_.push_back(std::move(it->second));
    connections_.erase(it);
  }
}

void HttpServer::Impl::HandleCompletions() {
  std::vector<Completion> done;
  {
    MutexLock lock(&done_mutex_);
    done.swap(done_);
  }
  for (Completion& d : done) {
    auto it = connections_.find(d.connection_id);
    if (it == connections_.end()) continue;
    Connection* c = it->second.get();
    if (c->broken) {
      Close(c);
      continue;
    }
    QueueOutput(c, std::move(d.response), d.sent, !d.keep_alive);
  }
}

void HttpServer::Impl::Sweep(int64_t now) {
  const int64_t header_ms = int64_t{config_.http_header_timeout_seconds} * 1000;
  const int64_t body_ms = int64_t{config_.http_body_timeout_seconds} * 1000;
  const int64_t idle_ms = int64_t{config_.http_keepalive_timeout_seconds} * 1000;
  std::vector<Connection*> expired;
  for (auto& [id, c] : connections_) {
    bool late = false;
    switch (c->state) {
      case State::kHead:
        late = c->request_started_ms != 0 ? now - c->request_started_ms > header_ms
                                          : now - c->last_activity_ms > idle_ms;
        break;
      case State::kBody: late = now - c->body_started_ms > body_ms; break;
      case State::kWriting: late = now - c->last_activity_ms > body_ms; break;
      case State::kLingering: late = now > c->linger_until_ms; break;
      case State::kHandling: break;  // the handler's time is not the client's fault
    }
    if (late) expired.push_back(c.get());
  }
  for (Connection* c : expired) Close(c);
}

// ---- Workers ---------------------------------------------------------------------------------

void HttpServer::Impl::Work() {
  while (true) {
    Job job;
    {
      MutexLock lock(&jobs_mutex_);
      while (!workers_stop_ && jobs_.empty()) jobs_cond_.Wait(&jobs_mutex_);
      if (workers_stop_) return;
      job = std::move(jobs_.front());
      jobs_.pop_front();
    }
    Completion done = Handle(job);
    // Write what the socket takes now; the reactor writes the rest and decides what next.
    while (done.sent < done.response.size()) {
      ssize_t n = ::send(job.fd, done.response.data() + done.sent, done.response.size() - done.sent,
                         MSG_NOSIGNAL | MSG_DONTWAIT);
      if (n > 0) {
        done.sent += static_cast<size_t>(n);
        continue;
      }
      if (n < 0 && errno == EINTR) continue;
      break;  // EAGAIN, or an error the reactor will see
    }
    bool wake;
    {
      MutexLock lock(&done_mutex_);
      wake = done_.empty();
      done_.push_back(std::move(done));
    }
    if (wake) {
      uint64_t one = 1;
      [[maybe_unused]] ssize_t n = ::write(wake_fd_, &one, sizeof(one));
    }
  }
}

HttpServer::Impl::Completion HttpServer::Impl::Handle(Job& job) {
  std::string request_id = NextRequestId();
  std::string target(job.head.Header("x-amz-target").value_or(""));
  // A POST without X-Amz-Target whose body is a form speaks the query protocol (IAM, STS).
  bool query = target.empty() && IsFormContentType(job.head.Header("content-type").value_or(""));
  WireResponse out;
  bool authorized = true;
  std::string principal;
  if (config_.require_auth) {
    HttpRequestView view;
    view.method = job.head.method;
    view.path = job.head.path();
    view.query = job.head.query();
    view.headers = std::move(job.head.headers);
    view.body = job.body;
    Result<std::string> who = verifier_->Verify(view);
    job.head.headers = std::move(view.headers);
    if (!who.ok()) {
      out = query ? Router::QueryErrorResponse(who.status()) : Router::ErrorResponse(who.status());
      authorized = false;
    } else {
      principal = *who;
    }
  }
  if (authorized)
    out = query ? router_->HandleQuery(job.body, principal) : router_->Handle(target, job.body, principal);
  OG_LOG(kDebug, "POST " << SanitizeUtf8(TruncateUtf8(target, 200)) << " -> " << out.http_status);
  bool keep_alive = job.head.keep_alive;
  return Completion{job.connection_id,
                    BuildResponse(out.http_status,
                                  out.content_type.empty() ? kJsonType : out.content_type.c_str(),
                                  out.body, request_id, keep_alive,
                                  job.head.minor_version == 0, Date()),
                    0, keep_alive};
}

// ---- HttpServer ------------------------------------------------------------------------------

Result<std::unique_ptr<HttpServer>> HttpServer::Make(const ServerConfig& config, const Router* router,
                                                     const Clock* clock, Random* random) {
  // Every connection is a descriptor: use all the process may have.
  rlimit limit{};
  if (getrlimit(RLIMIT_NOFILE, &limit) == 0 && limit.rlim_cur < limit.rlim_max) {
    limit.rlim_cur = limit.rlim_max;
    if (setrlimit(RLIMIT_NOFILE, &limit) != 0)
      OG_LOG(kWarn, "cannot raise the open-file limit: " << std::strerror(errno));
  }
  std::unique_ptr<HttpServer> server(new HttpServer());
  server->verifier_ =
      std::make_unique<SigV4Verifier>(config.credentials, clock, config.max_clock_skew_seconds);
  // The Glue JSON protocol puts the operation in X-Amz-Target: a signature that does not
  // cover it (and the content type) could be replayed against another operation.
  server->verifier_->RequireSignedHeaders({"content-type", "x-amz-target"});
  SystemRandom system_random;
  uint64_t seed = (random != nullptr ? random : &system_random)->NextU64();
  server->impl_ = std::make_unique<Impl>(config, router, server->verifier_.get(), clock, seed);
  return server;
}

HttpServer::~HttpServer() = default;

Status HttpServer::Bind() { return impl_->Bind(&port_); }

Status HttpServer::Serve() { return impl_->Serve(); }

void HttpServer::Stop() { impl_->Stop(); }

}  // namespace openglue::api
