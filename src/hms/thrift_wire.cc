#include "hms/thrift_wire.h"

#include <sys/socket.h>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <utility>

#include <thrift/protocol/TProtocolException.h>
#include <thrift/transport/TTransportException.h>

namespace openglue::hms {
namespace {

namespace tt = apache::thrift;
using tt::protocol::TProtocolException;
using tt::protocol::TType;
using tt::transport::TTransportException;

int64_t NowMs() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

constexpr size_t kReadChunk = 64 * 1024;

// What a decoded element costs in memory (a struct: a Partition with its StorageDescriptor is
// ~650 bytes, most structs here far less).
int64_t MemoryCost(TType type) {
  switch (type) {
    case tt::protocol::T_STRUCT: return 512;
    case tt::protocol::T_STRING: return 32;
    case tt::protocol::T_LIST: case tt::protocol::T_SET: case tt::protocol::T_MAP: return 48;
    default: return 8;
  }
}

// The fewest bytes an element takes on the wire in the binary protocol.
int64_t WireCost(TType type) {
  switch (type) {
    case tt::protocol::T_BOOL: case tt::protocol::T_BYTE: case tt::protocol::T_STRUCT: return 1;
    case tt::protocol::T_I16: return 2;
    case tt::protocol::T_I32: case tt::protocol::T_STRING: return 4;
    case tt::protocol::T_LIST: case tt::protocol::T_SET: return 5;
    case tt::protocol::T_MAP: return 6;
    default: return 8;
  }
}

}  // namespace

// ---- MessageTransport -------------------------------------------------------------------------

MessageTransport::MessageTransport(std::shared_ptr<tt::transport::TTransport> source, const HmsOptions& options)
    : source_(std::move(source)),
      socket_(dynamic_cast<tt::transport::TSocket*>(source_.get())),
      idle_timeout_ms_(options.idle_timeout_ms),
      message_timeout_ms_(options.message_timeout_ms),
      max_message_bytes_(static_cast<uint64_t>(options.max_message_bytes)) {
  idle_since_ms_ = NowMs();
  if (socket_ != nullptr) socket_->setSendTimeout(message_timeout_ms_);
}

MessageTransport::~MessageTransport() { Leave(); }

void MessageTransport::Join(std::shared_ptr<ConnectionSlots> slots) { slots_ = std::move(slots); }

void MessageTransport::Leave() {
  if (slots_) slots_->Leave(this);
  slots_.reset();
}

void MessageTransport::Evict() {
  if (socket_ != nullptr && socket_->getSocketFD() >= 0) ::shutdown(socket_->getSocketFD(), SHUT_RDWR);
}

bool MessageTransport::isOpen() const { return source_->isOpen(); }
bool MessageTransport::peek() { return in_offset_ < in_.size() || source_->peek(); }
void MessageTransport::open() { source_->open(); }

void MessageTransport::close() {
  Leave();  // before the socket closes: eviction never shuts down a reused descriptor
  source_->close();
}

void MessageTransport::Fill(uint64_t bytes) {
  if (!in_message_) {
    idle_ = false;  // a read has begun: this connection is no longer waiting between messages
  }
  while (in_.size() - in_offset_ < bytes) {
    int timeout_ms = idle_timeout_ms_;
    if (in_message_) {
      int64_t left = deadline_ms_ - NowMs();
      if (left <= 0) throw TTransportException(TTransportException::TIMED_OUT, "message deadline passed");
      timeout_ms = static_cast<int>(std::min<int64_t>(left, idle_timeout_ms_));
    } else {
      // Waiting for a message's first byte: evictable until it comes.
      idle_since_ms_ = NowMs();
      idle_ = true;
    }
    if (socket_ != nullptr) socket_->setRecvTimeout(std::max(1, timeout_ms));
    if (in_offset_ > 0 && in_offset_ == in_.size()) {
      in_.clear();
      in_offset_ = 0;
    }
    size_t old = in_.size();
    in_.resize(old + kReadChunk);
    uint32_t got = 0;
    try {
      got = source_->read(reinterpret_cast<uint8_t*>(&in_[old]), kReadChunk);
    } catch (...) {
      in_.resize(old);
      idle_ = false;
      throw;
    }
    in_.resize(old + got);
    idle_ = false;
    if (got == 0) throw TTransportException(TTransportException::END_OF_FILE, "the client closed the connection");
    if (!in_message_) {
      in_message_ = true;
      deadline_ms_ = NowMs() + message_timeout_ms_;
    }
  }
  if (!in_message_ && bytes > 0) {  // a pipelined message already buffered
    in_message_ = true;
    deadline_ms_ = NowMs() + message_timeout_ms_;
  }
}

void MessageTransport::Ensure(uint64_t bytes) {
  if (message_bytes_ + bytes > max_message_bytes_)
    throw TTransportException(TTransportException::END_OF_FILE, "message larger than the metastore reads");
  Fill(bytes);
}

uint32_t MessageTransport::read(uint8_t* buf, uint32_t len) {
  if (len == 0) return 0;
  Ensure(1);
  uint32_t n = static_cast<uint32_t>(std::min<size_t>(len, in_.size() - in_offset_));
  std::memcpy(buf, in_.data() + in_offset_, n);
  consume(n);
  return n;
}

const uint8_t* MessageTransport::borrow(uint8_t*, uint32_t* len) {
  Ensure(*len);
  return reinterpret_cast<const uint8_t*>(in_.data() + in_offset_);
}

void MessageTransport::consume(uint32_t len) {
  in_offset_ += len;
  message_bytes_ += len;
}

uint32_t MessageTransport::readEnd() {
  uint32_t bytes = static_cast<uint32_t>(message_bytes_);
  message_bytes_ = 0;
  in_message_ = false;
  if (in_offset_ == in_.size()) {
    in_.clear();
    in_.shrink_to_fit();  // a large message's buffer is not kept for an idle connection
    in_offset_ = 0;
  } else {
    in_.erase(0, in_offset_);
    in_offset_ = 0;
  }
  return bytes;
}

void MessageTransport::write(const uint8_t* buf, uint32_t len) { out_.append(reinterpret_cast<const char*>(buf), len); }

void MessageTransport::flush() {
  std::string out;
  out.swap(out_);
  if (!out.empty()) source_->write(reinterpret_cast<const uint8_t*>(out.data()), static_cast<uint32_t>(out.size()));
  source_->flush();
}

// ---- BudgetedBinaryProtocol -------------------------------------------------------------------

BudgetedBinaryProtocol::BudgetedBinaryProtocol(std::shared_ptr<tt::transport::TTransport> trans,
                                               const HmsOptions& options,
                                               std::shared_ptr<std::atomic<int64_t>> shared)
    : TVirtualProtocol(trans),
      message_(dynamic_cast<MessageTransport*>(trans.get())),
      budget_(options.max_decoded_bytes),
      shared_budget_(options.max_decoded_bytes_total),
      shared_(std::move(shared)) {
  setStringSizeLimit(options.max_string_bytes);
  setContainerSizeLimit(options.max_container_items);
  setStrict(/*strict_read=*/true, /*strict_write=*/true);
}

BudgetedBinaryProtocol::~BudgetedBinaryProtocol() { Release(); }

void BudgetedBinaryProtocol::Release() {
  if (shared_ && spent_ > 0) shared_->fetch_sub(spent_);
  spent_ = 0;
}

tt::protocol::TType BudgetedBinaryProtocol::ReadType() {
  int8_t byte = 0;
  readByte(byte);
  switch (byte) {
    case tt::protocol::T_STOP: case tt::protocol::T_VOID: case tt::protocol::T_BOOL:
    case tt::protocol::T_BYTE: case tt::protocol::T_DOUBLE: case tt::protocol::T_I16:
    case tt::protocol::T_I32: case tt::protocol::T_U64: case tt::protocol::T_I64:
    case tt::protocol::T_STRING: case tt::protocol::T_STRUCT: case tt::protocol::T_MAP:
    case tt::protocol::T_SET: case tt::protocol::T_LIST: case tt::protocol::T_UTF8:
    case tt::protocol::T_UTF16:
      return static_cast<TType>(byte);
    default:
      throw TProtocolException(TProtocolException::INVALID_DATA, "unknown Thrift type " + std::to_string(byte));
  }
}

uint32_t BudgetedBinaryProtocol::ReadSize() {
  int32_t size = 0;
  readI32(size);
  if (size < 0) throw TProtocolException(TProtocolException::NEGATIVE_SIZE);
  if (container_limit_ && size > container_limit_) throw TProtocolException(TProtocolException::SIZE_LIMIT);
  return static_cast<uint32_t>(size);
}

uint32_t BudgetedBinaryProtocol::readMessageBegin(std::string& name, tt::protocol::TMessageType& type,
                                                  int32_t& seqid) {
  Release();  // the previous message's arguments are gone
  int32_t word = 0;
  uint32_t read = readI32(word);
  if (word >= 0 || (word & VERSION_MASK) != VERSION_1)
    throw TProtocolException(TProtocolException::BAD_VERSION, "no strict binary protocol version header");
  int kind = word & 0xff;
  if (kind < tt::protocol::T_CALL || kind > tt::protocol::T_ONEWAY)
    throw TProtocolException(TProtocolException::INVALID_DATA, "unknown message type " + std::to_string(kind));
  type = static_cast<tt::protocol::TMessageType>(kind);
  read += readString(name);
  read += readI32(seqid);
  return read;
}

uint32_t BudgetedBinaryProtocol::readFieldBegin(std::string& name, TType& type, int16_t& id) {
  type = ReadType();
  if (type == tt::protocol::T_STOP) {
    id = 0;
    return 1;
  }
  return 1 + readI16(id);
}

uint32_t BudgetedBinaryProtocol::readListBegin(TType& elem_type, uint32_t& size) {
  elem_type = ReadType();
  size = ReadSize();
  Arrive(size, WireCost(elem_type));
  Charge(size, MemoryCost(elem_type));
  return 5;
}

// A set's header is a list's.
uint32_t BudgetedBinaryProtocol::readSetBegin(TType& elem_type, uint32_t& size) {
  return readListBegin(elem_type, size);
}

uint32_t BudgetedBinaryProtocol::readMapBegin(TType& key_type, TType& value_type, uint32_t& size) {
  key_type = ReadType();
  value_type = ReadType();
  size = ReadSize();
  Arrive(size, WireCost(key_type) + WireCost(value_type));
  Charge(size, MemoryCost(key_type) + MemoryCost(value_type) + 64);  // + a tree node
  return 6;
}

void BudgetedBinaryProtocol::Arrive(uint32_t items, int64_t wire_bytes_each) {
  // The generated reader resizes to the declared count at once: wait until the smallest
  // encoding of that many elements has arrived (a 42-byte header declaring 200,000 structs
  // allocates nothing until 200,000 bytes are here).
  if (message_ != nullptr && items > 0) message_->Ensure(static_cast<uint64_t>(items) * wire_bytes_each);
}

void BudgetedBinaryProtocol::Charge(uint32_t items, int64_t each) {
  int64_t cost = static_cast<int64_t>(items) * each;
  spent_ += cost;
  int64_t total = shared_ ? shared_->fetch_add(cost) + cost : spent_;
  if (spent_ > budget_ || total > shared_budget_)
    throw TProtocolException(TProtocolException::SIZE_LIMIT,
                             spent_ > budget_ ? "message declares more than the metastore reads at once"
                                              : "the metastore is reading as much as it may at once");
}

// ---- ConnectionSlots --------------------------------------------------------------------------

bool ConnectionSlots::Admit(MessageTransport* transport, const std::string& client) {
  MutexLock lock(&mutex_);
  int of_client = 0;
  for (const auto& [t, c] : clients_) of_client += c == client;
  bool client_full = of_client >= per_client_;
  bool server_full = static_cast<int>(clients_.size()) >= max_connections_;
  if (client_full || server_full) {
    MessageTransport* victim = nullptr;
    for (const auto& [t, c] : clients_) {
      if (client_full && c != client) continue;
      if (!t->Idle()) continue;
      if (victim == nullptr || t->IdleSinceMs() < victim->IdleSinceMs()) victim = t;
    }
    if (victim == nullptr) return false;
    victim->Evict();
    clients_.erase(victim);
  }
  clients_[transport] = client;
  return true;
}

void ConnectionSlots::Leave(MessageTransport* transport) {
  MutexLock lock(&mutex_);
  clients_.erase(transport);
}

}  // namespace openglue::hms
