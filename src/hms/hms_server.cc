#include "hms/hms_server.h"

#include <thread>
#include <utility>

#include <thrift/TConfiguration.h>
#include <thrift/TOutput.h>
#include <thrift/protocol/TBinaryProtocol.h>
#include <thrift/protocol/TProtocolException.h>
#include <thrift/protocol/TVirtualProtocol.h>
#include <thrift/server/TThreadedServer.h>
#include <thrift/transport/TBufferTransports.h>
#include <thrift/transport/TServerSocket.h>
#include <thrift/transport/TSocket.h>

#include "common/logging.h"
#include "common/strings.h"
#include "common/thread_annotations.h"
#include "hms/metastore_handler.h"
#include "hms/peer_uid.h"
#include "hms/thrift_wire.h"

namespace openglue::hms {
namespace {

namespace tt = apache::thrift;

// A server socket whose listen() may be called twice: HmsServer::Start listens first (to report
// a bind failure and learn the port), then TThreadedServer::serve() calls it again.
class EarlyListenSocket : public tt::transport::TServerSocket {
 public:
  using TServerSocket::TServerSocket;
  void listen() override {
    if (listening_) return;
    TServerSocket::listen();
    listening_ = true;
  }

 private:
  bool listening_ = false;  // only touched before serve() and by the serve() thread
};

// Every connection's transport is a MessageTransport (deadlines, bytes before allocations),
// admitted by the server's ConnectionSlots; the protocol charges what containers declare.
class MessageTransportFactory : public tt::transport::TTransportFactory {
 public:
  explicit MessageTransportFactory(const HmsOptions& options) : options_(options) {}
  std::shared_ptr<tt::transport::TTransport> getTransport(
      std::shared_ptr<tt::transport::TTransport> trans) override {
    return std::make_shared<MessageTransport>(std::move(trans), options_);
  }

 private:
  HmsOptions options_;
};

class BudgetedProtocolFactory : public tt::protocol::TProtocolFactory {
 public:
  explicit BudgetedProtocolFactory(const HmsOptions& options) : options_(options) {}
  std::shared_ptr<tt::protocol::TProtocol> getProtocol(std::shared_ptr<tt::transport::TTransport> trans) override {
    return std::make_shared<BudgetedBinaryProtocol>(std::move(trans), options_, shared_);
  }

 private:
  HmsOptions options_;
  std::shared_ptr<std::atomic<int64_t>> shared_ = std::make_shared<std::atomic<int64_t>>(0);
};

void ThriftOutput(const char* message) { OG_LOG(kDebug, "HMS thrift: " << message); }

// Set when the generated processor finds the method (it then asks the event handler for a
// context): what tells a served call from one answered UNKNOWN_METHOD.
thread_local bool t_method_found = false;

class CallLogger : public tt::TProcessorEventHandler {
 public:
  void* getContext(const char* fn_name, void* server_context) override {
    t_method_found = true;
    OG_LOG(kDebug, "HMS call " << fn_name);
    return nullptr;
  }
};

// The generated processor, logging the methods it does not serve (a client's need we miss).
class LoggingProcessor : public wire::ThriftHiveMetastoreProcessor {
 public:
  using ThriftHiveMetastoreProcessor::ThriftHiveMetastoreProcessor;

 protected:
  bool dispatchCall(tt::protocol::TProtocol* iprot, tt::protocol::TProtocol* oprot, const std::string& fname,
                    int32_t seqid, void* call_context) override {
    t_method_found = false;
    bool result = ThriftHiveMetastoreProcessor::dispatchCall(iprot, oprot, fname, seqid, call_context);
    if (!t_method_found)
      OG_LOG(kInfo, "HMS: method " << SanitizeUtf8(TruncateUtf8(fname, 128))
                                   << " is not served (answered UNKNOWN_METHOD)");
    return result;
  }
};

// One handler per connection, bound to who opened it (HmsOptions::identify).
class CallerProcessorFactory : public tt::TProcessorFactory {
 public:
  CallerProcessorFactory(catalog::Catalog* catalog, const HmsOptions& options)
      : catalog_(catalog),
        options_(options),
        slots_(std::make_shared<ConnectionSlots>(options.max_connections, options.max_connections_per_client)) {}

  std::shared_ptr<tt::TProcessor> getProcessor(const tt::TConnectionInfo& info) override {
    MetastoreHandler::Caller caller;
    std::optional<uid_t> uid;
    std::string address = "an unknown peer", peer = address;
    auto socket = std::dynamic_pointer_cast<tt::transport::TSocket>(info.transport);
    if (socket) {
      uid = LocalPeerUid(socket->getSocketFD());
      address = SanitizeUtf8(socket->getPeerAddress());
      peer = address + ":" + std::to_string(socket->getPeerPort()) +
             (uid ? " (uid " + std::to_string(*uid) + ")" : "");
    }
    auto* transport = info.input ? dynamic_cast<MessageTransport*>(info.input->getTransport().get()) : nullptr;
    if (transport != nullptr) {
      transport->Join(slots_);
      if (!slots_->Admit(transport, uid ? "uid " + std::to_string(*uid) : address)) {
        OG_LOG(kWarn, "HMS: connection from " << peer << " refused: every slot of its client or of the "
                                                 "server is mid-message");
        if (socket) socket->close();
      }
    }
    if (options_.identify) {
      Result<std::string> principal = options_.identify(uid);
      if (principal.ok()) {
        caller.principal = *principal;
      } else {
        caller.refused = principal.status();
        OG_LOG(kInfo, "HMS: connection from " << peer << " refused: " << principal.status().message());
      }
    }
    auto processor = std::make_shared<LoggingProcessor>(
        std::make_shared<MetastoreHandler>(catalog_, options_, std::move(caller)));
    processor->setEventHandler(logger_);
    return processor;
  }

 private:
  catalog::Catalog* catalog_;
  const HmsOptions options_;
  std::shared_ptr<CallLogger> logger_ = std::make_shared<CallLogger>();
  std::shared_ptr<ConnectionSlots> slots_;
};

}  // namespace

struct HmsServer::Impl {
  std::shared_ptr<tt::server::TThreadedServer> server;
  std::thread thread;
  Mutex mu;
  bool stopped GUARDED_BY(mu) = false;
};

Result<std::unique_ptr<HmsServer>> HmsServer::Start(catalog::Catalog* catalog, HmsOptions options) {
  tt::GlobalOutput.setOutputFunction(&ThriftOutput);
  auto impl = std::make_unique<Impl>();
  auto socket = std::make_shared<EarlyListenSocket>(options.host, options.port);
  int port = 0;
  try {
    socket->listen();
    port = socket->getPort();
  } catch (const std::exception& e) {
    return Status::InvalidInput("Hive Metastore: cannot listen on " + options.host + ":" +
                                std::to_string(options.port) + ": " + e.what());
  }
  auto protocol = std::make_shared<BudgetedProtocolFactory>(options);
  impl->server = std::make_shared<tt::server::TThreadedServer>(
      std::make_shared<CallerProcessorFactory>(catalog, options), socket, std::make_shared<MessageTransportFactory>(options), protocol);
  // ConnectionSlots decides who stays: the accept loop must not wait before it can decide.
  impl->server->setConcurrentClientLimit(2 * options.max_connections + 8);
  auto server = impl->server;
  impl->thread = std::thread([server] {
    try {
      server->serve();
    } catch (const std::exception& e) {
      OG_LOG(kError, "Hive Metastore stopped: " << e.what());
    }
  });
  return std::unique_ptr<HmsServer>(new HmsServer(std::move(impl), port, options.host));
}

HmsServer::HmsServer(std::unique_ptr<Impl> impl, int port, std::string host)
    : impl_(std::move(impl)), port_(port), host_(std::move(host)) {}

HmsServer::~HmsServer() { Stop(); }

std::string HmsServer::uri() const { return "thrift://" + host_ + ":" + std::to_string(port_); }

void HmsServer::Stop() {
  {
    MutexLock lock(&impl_->mu);
    if (impl_->stopped) return;
    impl_->stopped = true;
  }
  try {
    impl_->server->stop();
  } catch (const std::exception& e) {
    OG_LOG(kWarn, "Hive Metastore stop: " << e.what());
  }
  if (impl_->thread.joinable()) impl_->thread.join();
}

}  // namespace openglue::hms
