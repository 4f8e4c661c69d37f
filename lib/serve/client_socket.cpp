#include "serve/client_socket.h"

#include <cstdlib>
#include <dirent.h>
#include <netdb.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/stat.h>

namespace attn::serve {

namespace {

// An address as httplib writes it (getnameinfo's numeric host, and the port).
bool numeric_address(const sockaddr_storage& address, socklen_t length, std::string& host, int& port) {
  if (address.ss_family == AF_INET)
    port = ntohs(reinterpret_cast<const sockaddr_in&>(address).sin_port);
  else if (address.ss_family == AF_INET6)
    port = ntohs(reinterpret_cast<const sockaddr_in6&>(address).sin6_port);
  else
    return false;
  char buffer[NI_MAXHOST];
  if (getnameinfo(reinterpret_cast<const sockaddr*>(&address), length, buffer, sizeof(buffer), nullptr, 0,
                  NI_NUMERICHOST) != 0)
    return false;
  host = buffer;
  return true;
}

bool has_address(int fd, bool peer, const std::string& host, int port) {
  sockaddr_storage address{};
  socklen_t length = sizeof(address);
  const int got = peer ? getpeername(fd, reinterpret_cast<sockaddr*>(&address), &length)
                       : getsockname(fd, reinterpret_cast<sockaddr*>(&address), &length);
  std::string found_host;
  int found_port = -1;
  return got == 0 && numeric_address(address, length, found_host, found_port) && found_port == port &&
         found_host == host;
}

}  // namespace

int connection_socket(const std::string& local, int local_port, const std::string& remote, int remote_port) {
  DIR* descriptors = opendir("/proc/self/fd");
  if (!descriptors) return -1;
  int found = -1;
  while (const dirent* entry = readdir(descriptors)) {
    char* end = nullptr;
    const long fd = std::strtol(entry->d_name, &end, 10);
    if (end == entry->d_name || *end != '\0' || fd == dirfd(descriptors)) continue;
    struct stat status {};
    if (fstat(int(fd), &status) != 0 || !S_ISSOCK(status.st_mode)) continue;
    // The peer first: it is the client's own port, which few sockets share.
    if (has_address(int(fd), true, remote, remote_port) && has_address(int(fd), false, local, local_port)) {
      found = int(fd);
      break;
    }
  }
  closedir(descriptors);
  return found;
}

bool peer_closed(int fd) {
  pollfd poll_fd{fd, POLLIN | POLLRDHUP, 0};
  if (poll(&poll_fd, 1, 0) <= 0) return false;  // nothing happened (or cannot tell: keep serving)
  if (poll_fd.revents & (POLLRDHUP | POLLHUP | POLLERR | POLLNVAL)) return true;
  // Readable: bytes (a pipelined request: the client is there) or end of stream.
  char byte;
  return recv(fd, &byte, 1, MSG_PEEK | MSG_DONTWAIT) == 0;
}

}  // namespace attn::serve
