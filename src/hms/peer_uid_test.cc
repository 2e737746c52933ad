#include "hms/peer_uid.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <gtest/gtest.h>

namespace openglue::hms {
namespace {

constexpr char kTable[] =
    "  sl  local_address rem_address   st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode\n"
    "   0: 0100007F:1F90 00000000:0000 0A 00000000:00000000 00:00000000 00000000     0        0 1 1\n"
    "   1: 0100007F:C350 0100007F:1F90 01 00000000:00000000 00:00000000 00000000  5001        0 2 1\n"
    "   2: 0100007F:1F90 0100007F:C350 01 00000000:00000000 00:00000000 00000000     0        0 3 1\n";

TEST(PeerUidTest, FindsTheClientEndsUidNotTheServersOrTheListeners) {
  EXPECT_EQ(FindSocketUid(kTable, "0100007F:C350", "0100007F:1F90"), std::optional<uid_t>(5001));
  EXPECT_EQ(FindSocketUid(kTable, "0100007F:1F90", "0100007F:C350"), std::optional<uid_t>(0));
  EXPECT_EQ(FindSocketUid(kTable, "0100007F:C351", "0100007F:1F90"), std::nullopt);
  EXPECT_EQ(FindSocketUid("header only\n", "0100007F:C350", "0100007F:1F90"), std::nullopt);
}

TEST(PeerUidTest, ALoopbackConnectionOfThisProcessIsOurs) {
  int listener = socket(AF_INET, SOCK_STREAM, 0);
  ASSERT_GE(listener, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  ASSERT_EQ(bind(listener, reinterpret_cast<sockaddr*>(&addr), sizeof addr), 0);
  ASSERT_EQ(listen(listener, 1), 0);
  socklen_t len = sizeof addr;
  ASSERT_EQ(getsockname(listener, reinterpret_cast<sockaddr*>(&addr), &len), 0);
  int client = socket(AF_INET, SOCK_STREAM, 0);
  ASSERT_EQ(connect(client, reinterpret_cast<sockaddr*>(&addr), sizeof addr), 0);
  int accepted = accept(listener, nullptr, nullptr);
  ASSERT_GE(accepted, 0);
  EXPECT_EQ(LocalPeerUid(accepted), std::optional<uid_t>(geteuid()));
  close(accepted);
  close(client);
  close(listener);
}

}  // namespace
}  // namespace openglue::hms
