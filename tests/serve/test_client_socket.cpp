// Finding a connection's socket by its addresses, and telling that its peer left, on real
// loopback sockets of this process.
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <catch2/catch.hpp>

#include "serve/client_socket.h"

using namespace attn::serve;

namespace {

int port_of(int fd, bool peer) {
  sockaddr_in address{};
  socklen_t length = sizeof(address);
  if (peer)
    getpeername(fd, reinterpret_cast<sockaddr*>(&address), &length);
  else
    getsockname(fd, reinterpret_cast<sockaddr*>(&address), &length);
  return ntohs(address.sin_port);
}

// A listening socket, a client connected to it and the accepted end.
struct Connection {
  int listener = -1, client = -1, accepted = -1;
  Connection() {
    listener = socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in address{};
    address.sin_family = AF_INET;
    address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    REQUIRE(bind(listener, reinterpret_cast<const sockaddr*>(&address), sizeof(address)) == 0);
    REQUIRE(listen(listener, 4) == 0);
    address.sin_port = htons(uint16_t(port_of(listener, false)));
    client = socket(AF_INET, SOCK_STREAM, 0);
    REQUIRE(connect(client, reinterpret_cast<const sockaddr*>(&address), sizeof(address)) == 0);
    accepted = accept(listener, nullptr, nullptr);
    REQUIRE(accepted >= 0);
  }
  ~Connection() {
    for (int fd : {listener, client, accepted})
      if (fd >= 0) close(fd);
  }
};

}  // namespace

TEST_CASE("connection_socket finds the accepted socket by its four addresses", "[serve][socket]") {
  Connection c;
  const int server_port = port_of(c.accepted, false), client_port = port_of(c.accepted, true);
  // The server's side, not the client's (which has the same addresses the other way round).
  CHECK(connection_socket("127.0.0.1", server_port, "127.0.0.1", client_port) == c.accepted);
  CHECK(connection_socket("127.0.0.1", client_port, "127.0.0.1", server_port) == c.client);
  CHECK(connection_socket("127.0.0.1", server_port, "127.0.0.2", client_port) == -1);
  CHECK(connection_socket("127.0.0.1", server_port, "127.0.0.1",
                          client_port + 1 == server_port ? 1 : client_port + 1) == -1);
}

TEST_CASE("peer_closed: false while the client waits or sends - true once it closed", "[serve][socket]") {
  Connection c;
  CHECK_FALSE(peer_closed(c.accepted));
  REQUIRE(send(c.client, "GET", 3, 0) == 3);
  usleep(20000);
  CHECK_FALSE(peer_closed(c.accepted));  // bytes to read: a client that is there
  char buffer[3];
  CHECK(recv(c.accepted, buffer, 3, 0) == 3);  // peer_closed read nothing
  close(c.client);
  c.client = -1;
  usleep(20000);
  CHECK(peer_closed(c.accepted));
}
