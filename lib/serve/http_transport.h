#pragma once
// attn-serve's HTTP transport, the one place that knows Boost.Beast/Asio (with
// http_connection.h, its connections): the listening socket, one io thread (the one that calls
// listen()) that holds every connection with its deadlines, the cap on connections, the worker
// pool that runs the routes' handlers (--http-threads requests at once), the mapping of a
// route's errors to status codes, a count of every answer and connection in Metrics, and
// shutdown. The API dialects register their routes through `Routes` (serve/routes.h) and never
// see Beast.
//
//   HttpTransport transport(options, metrics);
//   transport.post("/translate", handler);    // every route before listen()
//   int port = transport.bind();
//   std::thread http([&] { transport.listen(); });
//   ... transport.stop() from any thread; http.join(): every accepted request answered
#include <memory>
#include <string>

#include "serve/metrics.h"
#include "serve/routes.h"
#include "serve/server_options.h"

namespace attn::serve {

class HttpTransport final : public Routes {
 public:
  // Uses options' host, port, deadlines, size limits, max_connections and http_threads.
  HttpTransport(const ServerOptions& options, Metrics& metrics);
  ~HttpTransport() override;
  HttpTransport(const HttpTransport&) = delete;
  HttpTransport& operator=(const HttpTransport&) = delete;

  void get(const std::string& path, Handler handler) override;
  void post(const std::string& path, Handler handler) override;

  // Raises the process' descriptor limit (RLIMIT_NOFILE's soft limit to its hard limit) and
  // binds host:port; returns the port (the one chosen when port is 0). Throws naming both.
  int bind();
  // Serves on the calling thread until stop(); returns once the requests it accepted are answered.
  void listen();
  // From any thread: stops accepting and closes the connections that wait for a request.
  // Requests already read are still answered (their connections close after).
  void stop();
  // Connections open at once (options' max_connections, or what the descriptor limit allows).
  int max_connections() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace attn::serve
