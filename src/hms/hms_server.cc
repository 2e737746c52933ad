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

// TBufferedTransport bounded by a TConfiguration (max message size, recursion depth) whose
// message budget restarts with each message: Thrift's protocol checks every declared string
// and container length against what is left of it, so no length prefix allocates more than a
// message can carry.
class BoundedBufferedTransport : public tt::transport::TBufferedTransport {
 public:
  BoundedBufferedTransport(std::shared_ptr<tt::transport::TTransport> transport,
                           std::shared_ptr<tt::TConfiguration> config)
      : TBufferedTransport(std::move(transport), config) {}
  uint32_t readEnd() override {
    resetConsumedMessageSize();
    return TBufferedTransport::readEnd();
  }
};

class BoundedTransportFactory : public tt::transport::TTransportFactory {
 public:
  explicit BoundedTransportFactory(std::shared_ptr<tt::TConfiguration> config) : config_(std::move(config)) {}
  std::shared_ptr<tt::transport::TTransport> getTransport(
      std::shared_ptr<tt::transport::TTransport> trans) override {
    return std::make_shared<BoundedBufferedTransport>(std::move(trans), config_);
  }

 private:
  std::shared_ptr<tt::TConfiguration> config_;
};

// The binary protocol with a per-message budget on what declared container sizes make the
// generated reader allocate. Thrift checks a declared length against the bytes left in the
// message, but counts a struct as costing nothing on the wire, and an empty struct is 1 byte
// there and hundreds in memory (a Partition, with its StorageDescriptor, is ~650 bytes): so
// every list, set and map header is charged an estimate of the memory its elements take, and a
// message whose charges pass the budget fails (the connection closes).
class BudgetedBinaryProtocol
    : public tt::protocol::TVirtualProtocol<BudgetedBinaryProtocol, tt::protocol::TBinaryProtocol> {
 public:
  using Base = tt::protocol::TBinaryProtocol;
  BudgetedBinaryProtocol(std::shared_ptr<tt::transport::TTransport> trans, const HmsOptions& options)
      : TVirtualProtocol(std::move(trans)), budget_(options.max_decoded_bytes) {
    setStringSizeLimit(options.max_string_bytes);
    setContainerSizeLimit(options.max_container_items);
    setStrict(/*strict_read=*/true, /*strict_write=*/true);
  }

  uint32_t readMessageBegin(std::string& name, tt::protocol::TMessageType& type, int32_t& seqid) {
    spent_ = 0;
    return Base::readMessageBegin(name, type, seqid);
  }
  uint32_t readListBegin(tt::protocol::TType& elem_type, uint32_t& size) {
    uint32_t read = Base::readListBegin(elem_type, size);
    Charge(size, Cost(elem_type));
    return read;
  }
  uint32_t readSetBegin(tt::protocol::TType& elem_type, uint32_t& size) {
    uint32_t read = Base::readSetBegin(elem_type, size);
    Charge(size, Cost(elem_type));
    return read;
  }
  uint32_t readMapBegin(tt::protocol::TType& key_type, tt::protocol::TType& value_type, uint32_t& size) {
    uint32_t read = Base::readMapBegin(key_type, value_type, size);
    Charge(size, Cost(key_type) + Cost(value_type) + 64);  // + a tree node
    return read;
  }

 private:
  static int64_t Cost(tt::protocol::TType type) {
    switch (type) {
      case tt::protocol::T_STRUCT: return 512;
      case tt::protocol::T_STRING: return 32;
      case tt::protocol::T_LIST: case tt::protocol::T_SET: case tt::protocol::T_MAP: return 48;
      default: return 8;
    }
  }
  void Charge(uint32_t items, int64_t each) {
    spent_ += static_cast<int64_t>(items) * each;
    if (spent_ > budget_)
      throw tt::protocol::TProtocolException(tt::protocol::TProtocolException::SIZE_LIMIT,
                                             "message declares more than the metastore reads at once");
  }

  int64_t budget_;
  int64_t spent_ = 0;  // this message's charges; a protocol serves one connection's thread
};

class BudgetedProtocolFactory : public tt::protocol::TProtocolFactory {
 public:
  explicit BudgetedProtocolFactory(const HmsOptions& options) : options_(options) {}
  std::shared_ptr<tt::protocol::TProtocol> getProtocol(std::shared_ptr<tt::transport::TTransport> trans) override {
    return std::make_shared<BudgetedBinaryProtocol>(std::move(trans), options_);
  }

 private:
  HmsOptions options_;
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
      : catalog_(catalog), options_(options) {}

  std::shared_ptr<tt::TProcessor> getProcessor(const tt::TConnectionInfo& info) override {
    MetastoreHandler::Caller caller;
    if (options_.identify) {
      std::optional<uid_t> uid;
      std::string peer = "an unknown peer";
      if (auto socket = std::dynamic_pointer_cast<tt::transport::TSocket>(info.transport)) {
        uid = LocalPeerUid(socket->getSocketFD());
        peer = SanitizeUtf8(socket->getPeerAddress()) + ":" + std::to_string(socket->getPeerPort());
      }
      Result<std::string> principal = options_.identify(uid);
      if (principal.ok()) {
        caller.principal = *principal;
      } else {
        caller.refused = principal.status();
        OG_LOG(kInfo, "HMS: connection from " << peer << (uid ? " (uid " + std::to_string(*uid) + ")" : "")
                                              << " refused: " << principal.status().message());
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
  socket->setRecvTimeout(options.idle_timeout_ms);
  int port = 0;
  try {
    socket->listen();
    port = socket->getPort();
  } catch (const std::exception& e) {
    return Status::InvalidInput("Hive Metastore: cannot listen on " + options.host + ":" +
                                std::to_string(options.port) + ": " + e.what());
  }
  auto config = std::make_shared<tt::TConfiguration>(options.max_message_bytes, options.max_message_bytes);
  auto protocol = std::make_shared<BudgetedProtocolFactory>(options);
  impl->server = std::make_shared<tt::server::TThreadedServer>(
      std::make_shared<CallerProcessorFactory>(catalog, options), socket, std::make_shared<BoundedTransportFactory>(config), protocol);
  impl->server->setConcurrentClientLimit(options.max_connections);
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
