// Fuzz target: the metastore's Thrift reader (hms/thrift_wire.h) on any bytes a client sends:
// message frames, container and string headers, nesting. The bytes go through the server's own
// MessageTransport and BudgetedBinaryProtocol into the generated argument readers of the methods
// with the deepest shapes (partitions, tables, databases, functions); any other name is skipped
// as a struct. Every outcome must be a Thrift exception or a value: no crash, no hang, and no
// allocation a sanitizer's memory limit would catch (the budget is the server's default).
#include <cstddef>
#include <cstdint>
#include <exception>
#include <memory>
#include <string>

#include <thrift/transport/TBufferTransports.h>

#include "ThriftHiveMetastore.h"
#include "hms/hms_server.h"
#include "hms/thrift_wire.h"

namespace {

namespace tt = apache::thrift;
namespace wire = openglue::hms::wire;

template <typename Args>
void ReadArgs(tt::protocol::TProtocol* protocol) {
  Args args;
  args.read(protocol);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size > (1 << 20)) return 0;
  openglue::hms::HmsOptions options;
  auto memory = std::make_shared<tt::transport::TMemoryBuffer>(const_cast<uint8_t*>(data), static_cast<uint32_t>(size));
  auto transport = std::make_shared<openglue::hms::MessageTransport>(memory, options);
  auto shared = std::make_shared<std::atomic<int64_t>>(0);
  openglue::hms::BudgetedBinaryProtocol protocol(transport, options, shared);
  try {
    for (int message = 0; message < 4; ++message) {
      std::string name;
      tt::protocol::TMessageType type;
      int32_t seqid = 0;
      protocol.readMessageBegin(name, type, seqid);
      if (name == "add_partitions") ReadArgs<wire::ThriftHiveMetastore_add_partitions_args>(&protocol);
      else if (name == "add_partitions_req") ReadArgs<wire::ThriftHiveMetastore_add_partitions_req_args>(&protocol);
      else if (name == "create_table") ReadArgs<wire::ThriftHiveMetastore_create_table_args>(&protocol);
      else if (name == "alter_partitions") ReadArgs<wire::ThriftHiveMetastore_alter_partitions_args>(&protocol);
      else if (name == "create_database") ReadArgs<wire::ThriftHiveMetastore_create_database_args>(&protocol);
      else if (name == "get_table_objects_by_name_req")
        ReadArgs<wire::ThriftHiveMetastore_get_table_objects_by_name_req_args>(&protocol);
      else if (name == "create_function") ReadArgs<wire::ThriftHiveMetastore_create_function_args>(&protocol);
      else protocol.skip(tt::protocol::T_STRUCT);
      protocol.readMessageEnd();
      transport->readEnd();
    }
  } catch (const std::exception&) {
    // Refused input: the server closes the connection.
  }
  return 0;
}
