// LocalPeerUid: which local user opened the other end of an accepted TCP connection.
//
// Linux lists every TCP socket of the network namespace in /proc/net/tcp and /proc/net/tcp6
// with the uid that created it. The client's socket is the entry whose local address is our
// peer's and whose remote address is our own; its uid is the client's. That is how the Hive
// Metastore tells a job run's connection (a per-run uid, run_sandbox.h) from an operator's,
// without a handshake the unmodified Hive client would not make.
#pragma once

#include <sys/types.h>

#include <optional>
#include <string>

namespace openglue::hms {

// The uid owning the client end of the connected socket `fd`, or nullopt when the client is
// not on this machine's network namespace (or the tables cannot be read).
std::optional<uid_t> LocalPeerUid(int fd);

// The same lookup over table text in /proc/net/tcp{,6} format; `local` and `remote` are the
// client end's addresses as that format writes them ("0100007F:1F90"). Exposed for tests.
std::optional<uid_t> FindSocketUid(const std::string& table, const std::string& local,
                                   const std::string& remote);

}  // namespace openglue::hms
