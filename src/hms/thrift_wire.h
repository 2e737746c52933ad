// The metastore's side of the Thrift wire, built to hold what a client sends to what it has sent
// (docs/security.md, "The Hive Metastore"):
//
// - MessageTransport reads a connection's bytes into a buffer of its own. A message gets
//   `message_timeout_ms` from its first byte to its last (a client trickling a byte at a time
//   cannot keep it open), a connection waits `idle_timeout_ms` for the next message, and
//   Ensure(n) waits until n bytes of the message have arrived, so that the reader allocates for
//   a declared length only once the bytes behind it are here.
// - BudgetedBinaryProtocol is the strict binary protocol whose container and string headers
//   wait for their bytes (the smallest encoding of the declared elements) before the generated
//   reader allocates, and whose containers are charged an estimate of the memory their elements
//   take, against a per-message budget and a budget shared by every connection.
// - ConnectionSlots admits connections: at most `max_connections`, at most `per_client` of one
//   client (a local uid, else an address); when full, the connection idle the longest (waiting
//   between messages) is closed to make room, and a new one is refused only when every slot is
//   mid-message, which the message deadline bounds.
//
// A transport and its protocol serve one connection's thread; ConnectionSlots is thread-safe.
#pragma once

#include <atomic>
#include <cstdint>
#include <map>
#include <memory>
#include <string>

#include <thrift/TConfiguration.h>
#include <thrift/protocol/TBinaryProtocol.h>
#include <thrift/protocol/TVirtualProtocol.h>
#include <thrift/transport/TSocket.h>
#include <thrift/transport/TVirtualTransport.h>

#include "common/thread_annotations.h"
#include "hms/hms_server.h"

namespace openglue::hms {

class ConnectionSlots;

class MessageTransport : public apache::thrift::transport::TVirtualTransport<MessageTransport> {
 public:
  // `source` gives the bytes; when it is a TSocket its receive timeouts carry the deadlines.
  MessageTransport(std::shared_ptr<apache::thrift::transport::TTransport> source, const HmsOptions& options);
  ~MessageTransport() override;

  bool isOpen() const override;
  bool peek() override;
  void open() override;
  void close() override;
  uint32_t read(uint8_t* buf, uint32_t len);
  void write(const uint8_t* buf, uint32_t len);
  void flush() override;
  // A pointer to *len buffered bytes of the message, after waiting for them to arrive.
  const uint8_t* borrow(uint8_t* buf, uint32_t* len);
  void consume(uint32_t len);
  uint32_t readEnd() override;

  // Waits until `bytes` more bytes of the current message are buffered. SIZE_LIMIT-style
  // TTransportException when they would pass the message size, TIMED_OUT at the deadline.
  void Ensure(uint64_t bytes);

  // For ConnectionSlots: waiting between messages (evictable), and since when.
  bool Idle() const { return idle_.load(); }
  int64_t IdleSinceMs() const { return idle_since_ms_.load(); }
  // Closes the connection under its owner's feet (shutdown(2); the owner's thread then ends it).
  void Evict();
  void Join(std::shared_ptr<ConnectionSlots> slots);

 private:
  void Fill(uint64_t bytes);
  void Leave();

  std::shared_ptr<apache::thrift::transport::TTransport> source_;
  apache::thrift::transport::TSocket* socket_;  // source_ when it is a socket, else null
  const int idle_timeout_ms_;
  const int message_timeout_ms_;
  const uint64_t max_message_bytes_;
  std::string in_;        // received bytes not yet read
  size_t in_offset_ = 0;  // the first unread byte of in_
  uint64_t message_bytes_ = 0;  // this message's bytes read so far
  bool in_message_ = false;
  int64_t deadline_ms_ = 0;
  std::string out_;
  std::atomic<bool> idle_{true};
  std::atomic<int64_t> idle_since_ms_{0};
  std::shared_ptr<ConnectionSlots> slots_;
};

class BudgetedBinaryProtocol
    : public apache::thrift::protocol::TVirtualProtocol<BudgetedBinaryProtocol,
                                                        apache::thrift::protocol::TBinaryProtocol> {
 public:
  using Base = apache::thrift::protocol::TBinaryProtocol;
  // `shared`: bytes charged by every connection's current message (the server-wide budget).
  BudgetedBinaryProtocol(std::shared_ptr<apache::thrift::transport::TTransport> trans, const HmsOptions& options,
                         std::shared_ptr<std::atomic<int64_t>> shared);
  ~BudgetedBinaryProtocol() override;

  // These read the type bytes themselves and refuse values outside Thrift's enums (INVALID_DATA)
  // before they become a TType or TMessageType: the base class casts any byte, which is
  // undefined behaviour for a value the enum cannot hold (found by thrift_reader_fuzz).
  uint32_t readMessageBegin(std::string& name, apache::thrift::protocol::TMessageType& type, int32_t& seqid);
  uint32_t readFieldBegin(std::string& name, apache::thrift::protocol::TType& type, int16_t& id);
  uint32_t readListBegin(apache::thrift::protocol::TType& elem_type, uint32_t& size);
  uint32_t readSetBegin(apache::thrift::protocol::TType& elem_type, uint32_t& size);
  uint32_t readMapBegin(apache::thrift::protocol::TType& key_type, apache::thrift::protocol::TType& value_type,
                        uint32_t& size);

 private:
  apache::thrift::protocol::TType ReadType();
  uint32_t ReadSize();
  void Arrive(uint32_t items, int64_t wire_bytes_each);
  void Charge(uint32_t items, int64_t each);
  void Release();

  MessageTransport* message_;  // the transport when it is a MessageTransport, else null
  const int64_t budget_;
  const int64_t shared_budget_;
  std::shared_ptr<std::atomic<int64_t>> shared_;
  int64_t spent_ = 0;  // this message's charges
};

class ConnectionSlots {
 public:
  ConnectionSlots(int max_connections, int per_client)
      : max_connections_(max_connections), per_client_(per_client) {}
  // Admits `transport` for `client`, closing the longest-idle connection (of that client when
  // it is at its cap, else of anyone) when there is no free slot. False: refused (every
  // candidate slot is mid-message).
  bool Admit(MessageTransport* transport, const std::string& client) EXCLUDES(mutex_);
  void Leave(MessageTransport* transport) EXCLUDES(mutex_);

 private:
  const int max_connections_;
  const int per_client_;
  Mutex mutex_;
  std::map<MessageTransport*, std::string> clients_ GUARDED_BY(mutex_);
};

}  // namespace openglue::hms
