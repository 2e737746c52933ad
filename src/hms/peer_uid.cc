#include "hms/peer_uid.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>

#include <cstdio>
#include <cstring>
#include <fstream>
#include <sstream>

namespace openglue::hms {
namespace {

// An IPv4 address and port as /proc/net/tcp writes them: the address's four bytes read as one
// native-endian word, then the port, in upper-case hex.
std::string Ipv4Text(in_addr addr, uint16_t port) {
  uint32_t word;
  std::memcpy(&word, &addr, sizeof word);
  char text[16];
  std::snprintf(text, sizeof text, "%08X:%04X", word, port);
  return text;
}

// An IPv6 address and port as /proc/net/tcp6 writes them: four native-endian words.
std::string Ipv6Text(const in6_addr& addr, uint16_t port) {
  uint32_t words[4];
  std::memcpy(words, &addr, sizeof words);
  char text[48];
  std::snprintf(text, sizeof text, "%08X%08X%08X%08X:%04X", words[0], words[1], words[2], words[3], port);
  return text;
}

// An IPv4 address as an IPv4-mapped IPv6 one (::ffff:a.b.c.d), as a dual-stack client sees it.
in6_addr Mapped(in_addr addr) {
  in6_addr out{};
  out.s6_addr[10] = 0xff;
  out.s6_addr[11] = 0xff;
  std::memcpy(&out.s6_addr[12], &addr, 4);
  return out;
}

std::string ReadAll(const char* path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

}  // namespace

std::optional<uid_t> FindSocketUid(const std::string& table, const std::string& local,
                                   const std::string& remote) {
  std::istringstream lines(table);
  std::string line;
  std::getline(lines, line);  // the header
  while (std::getline(lines, line)) {
    std::istringstream fields(line);
    std::string slot, local_address, remote_address, state, queues, timer, retransmits, uid;
    if (!(fields >> slot >> local_address >> remote_address >> state >> queues >> timer >> retransmits >> uid))
      continue;
    if (local_address != local || remote_address != remote) continue;
    char* end = nullptr;
    unsigned long value = std::strtoul(uid.c_str(), &end, 10);
    if (end == uid.c_str() || *end != '\0') return std::nullopt;
    return static_cast<uid_t>(value);
  }
  return std::nullopt;
}

std::optional<uid_t> LocalPeerUid(int fd) {
  sockaddr_storage peer{}, self{};
  socklen_t peer_len = sizeof peer, self_len = sizeof self;
  if (getpeername(fd, reinterpret_cast<sockaddr*>(&peer), &peer_len) != 0 ||
      getsockname(fd, reinterpret_cast<sockaddr*>(&self), &self_len) != 0 || peer.ss_family != self.ss_family)
    return std::nullopt;
  // The client end's (local, remote) pairs in the v4 table and in the v6 one.
  std::string v4_local, v4_remote, v6_local, v6_remote;
  if (peer.ss_family == AF_INET) {
    const auto& p = reinterpret_cast<const sockaddr_in&>(peer);
    const auto& s = reinterpret_cast<const sockaddr_in&>(self);
    v4_local = Ipv4Text(p.sin_addr, ntohs(p.sin_port));
    v4_remote = Ipv4Text(s.sin_addr, ntohs(s.sin_port));
    v6_local = Ipv6Text(Mapped(p.sin_addr), ntohs(p.sin_port));
    v6_remote = Ipv6Text(Mapped(s.sin_addr), ntohs(s.sin_port));
  } else if (peer.ss_family == AF_INET6) {
    const auto& p = reinterpret_cast<const sockaddr_in6&>(peer);
    const auto& s = reinterpret_cast<const sockaddr_in6&>(self);
    v6_local = Ipv6Text(p.sin6_addr, ntohs(p.sin6_port));
    v6_remote = Ipv6Text(s.sin6_addr, ntohs(s.sin6_port));
    if (IN6_IS_ADDR_V4MAPPED(&p.sin6_addr) && IN6_IS_ADDR_V4MAPPED(&s.sin6_addr)) {
      in_addr p4, s4;
      std::memcpy(&p4, &p.sin6_addr.s6_addr[12], 4);
      std::memcpy(&s4, &s.sin6_addr.s6_addr[12], 4);
      v4_local = Ipv4Text(p4, ntohs(p.sin6_port));
      v4_remote = Ipv4Text(s4, ntohs(s.sin6_port));
    }
  } else {
    return std::nullopt;
  }
  if (!v4_local.empty())
    if (auto uid = FindSocketUid(ReadAll("/proc/net/tcp"), v4_local, v4_remote)) return uid;
  return FindSocketUid(ReadAll("/proc/net/tcp6"), v6_local, v6_remote);
}

}  // namespace openglue::hms
