// HmsServer: the Data Catalog served as a Hive Metastore (Thrift binary protocol over an
// unframed, buffered socket, no SASL: what HiveMetaStoreClient speaks by default), so Spark,
// Hive, Trino and any HMS client see and change the same databases, tables, partitions and
// functions as Glue's API. The methods served and their translation are in docs/metastore.md;
// each calls the catalog operation the Glue API calls (validated by `validate` first, as the
// API validates its requests), and a Glue error becomes the Hive exception the method declares
// (EntityNotFound -> NoSuchObjectException, AlreadyExists -> AlreadyExistsException,
// InvalidInput -> InvalidObjectException/InvalidOperationException, else MetaException) with
// the Glue message. A method outside the subset answers TApplicationException UNKNOWN_METHOD.
//
// Hostile input (hms/thrift_wire.h): strict binary protocol (a message without Thrift's version
// header closes the connection); a declared string or container allocates only once the bytes
// behind it have arrived, and the memory containers make the reader allocate is bounded per
// message and server-wide; a message has a deadline from its first byte; connection slots are
// capped per client, and an idle connection gives its slot up to a new one. Nothing a client
// sends crashes the server or leaks an exception out of it.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>

#include "catalog/catalog.h"
#include "common/json.h"
#include "common/status.h"

namespace openglue::hms {

struct HmsOptions {
  std::string host = "127.0.0.1";
  int port = 0;  // 0: an ephemeral port (see HmsServer::port())
  // Hive clients need a location for every database: one without LocationUri is reported at
  // <default_location_root>/<name>.db (e.g. "file:/var/lib/openglue/warehouse").
  std::string default_location_root = "file:/tmp/openglue-warehouse";
  // Checks and normalizes a Glue request for an operation as the Glue API does (the service
  // model); null: no check. Must be thread-safe.
  std::function<Status(const std::string& operation, Json* request)> validate;
  // Who a connection's calls are made as (docs/security.md). `identify` is asked once per
  // connection with the uid owning the client's socket when the client is on this machine
  // (peer_uid.h; nullopt for a remote client) and returns the principal its calls are authorized
  // as: a job run's credential (its access key id), "" for an operator, or an error that each
  // catalog call of the connection then answers. `authorize(principal, "glue:GetTable")` is
  // asked before every catalog operation a call makes. Null: everyone may do everything.
  // Both must be thread-safe.
  std::function<Result<std::string>(std::optional<uid_t> peer_uid)> identify;
  std::function<Status(const std::string& principal, const std::string& action)> authorize;
  // Connections: at most max_connections, of which max_connections_per_client from one client
  // (a local uid, else an address); when full, the connection idle the longest makes room. A
  // message must arrive within message_timeout_ms of its first byte; an idle connection is
  // closed after idle_timeout_ms.
  int max_connections = 32;
  int max_connections_per_client = 8;
  int message_timeout_ms = 30 * 1000;
  int idle_timeout_ms = 10 * 60 * 1000;
  // One message: its bytes, one string's bytes, one container's items, and an estimate of the
  // memory its containers' elements take once decoded (a struct counts 512 bytes), per message
  // and over every connection's current message.
  int max_message_bytes = 32 * 1024 * 1024;
  int max_string_bytes = 16 * 1024 * 1024;
  int max_container_items = 200000;
  int64_t max_decoded_bytes = 128LL * 1024 * 1024;
  int64_t max_decoded_bytes_total = 256LL * 1024 * 1024;
};

class HmsServer {
 public:
  // Binds host:port and starts serving on a thread of its own. `catalog` is borrowed and must
  // outlive the server. InvalidInput/Internal naming the address when it cannot listen.
  static Result<std::unique_ptr<HmsServer>> Start(catalog::Catalog* catalog, HmsOptions options);
  ~HmsServer();
  HmsServer(const HmsServer&) = delete;
  HmsServer& operator=(const HmsServer&) = delete;

  // The port listened on (the ephemeral one when options.port was 0).
  int port() const { return port_; }
  // "thrift://host:port".
  std::string uri() const;
  // Stops accepting, closes every connection and joins the threads. Idempotent.
  void Stop();

 private:
  struct Impl;
  explicit HmsServer(std::unique_ptr<Impl> impl, int port, std::string host);
  std::unique_ptr<Impl> impl_;
  int port_;
  std::string host_;
};

}  // namespace openglue::hms
