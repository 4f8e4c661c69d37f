#pragma once
// attn-serve's HTTP transport, the one file that knows cpp-httplib: the listening socket, the
// server's threads, timeouts and body limit, the mapping of a route's errors to status codes
// (and of httplib's own refusals to the same {"error"} body), a count of every answer in
// Metrics, and shutdown. The API dialects register their routes through `Routes`
// (serve/routes.h) and never see httplib.
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
  // Uses options' host, port, max_body_bytes, read/write timeouts and http_threads.
  HttpTransport(const ServerOptions& options, Metrics& metrics);
  ~HttpTransport() override;
  HttpTransport(const HttpTransport&) = delete;
  HttpTransport& operator=(const HttpTransport&) = delete;

  void get(const std::string& path, Handler handler) override;
  void post(const std::string& path, Handler handler) override;

  // Binds host:port; returns the port (the one chosen when port is 0). Throws naming both.
  int bind();
  // Serves until stop(); returns once the requests it accepted are answered.
  void listen();
  // From any thread: stops accepting. Requests already accepted are still answered.
  void stop();

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace attn::serve
