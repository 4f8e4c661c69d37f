#pragma once
// Whether a request's client is still there. httplib 0.11 gives a handler the addresses of its
// connection but not its socket, and does not tell it that the client left; the socket is
// found among the process' descriptors by those addresses, and polled while the request waits.
//
//   const int socket = connection_socket(req.local_addr, req.local_port, req.remote_addr, req.remote_port);
//   while (!done) { if (socket >= 0 && peer_closed(socket)) cancel(); ... }
#include <string>

namespace attn::serve {

// The descriptor of this process' connected socket whose own address is local:local_port and
// whose peer is remote:remote_port (numeric hosts as httplib writes them); -1 when none is.
// httplib keeps a connection's socket open while its handler runs, so the descriptor stays
// that connection's for the handler's time.
int connection_socket(const std::string& local, int local_port, const std::string& remote, int remote_port);

// Whether the peer of connected socket `fd` has closed the connection (or shut down its
// sending side: HTTP clients do not, while they wait for an answer), or it was reset. Reads
// nothing: bytes the client sent stay for httplib.
bool peer_closed(int fd);

}  // namespace attn::serve
