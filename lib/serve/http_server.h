#pragma once
// attn-serve's HTTP server: the transport (http_transport.h, Boost.Beast) with both API
// dialects' routes, the service they share (translation_service.h), and the server's own
// endpoints; the order of start-up and shutdown.
//
//   POST /translate, GET /languages, GET /frontend/settings   LibreTranslate's API (libretranslate_api.h)
//   POST /detect                                               LibreTranslate's: the run's source language
//   POST /v1/translate                     attn's own: scores, n-best, word alignments (native_api.h)
//   GET /, POST /v1/attention, GET /v1/run     the attention explorer (explorer_api.h)
//   GET /health (503 until set_backend), GET /metrics (Prometheus)
//
//   HttpServer server(options);
//   int port = server.bind();                 // before the model loads: /health answers 503
//   std::thread http([&] { server.listen(); });
//   server.set_backend(std::move(backend), info);
//   ... stop() from the signal thread; http.join(): every accepted request answered
#include <memory>

#include "serve/explorer_api.h"
#include "serve/server_options.h"
#include "serve/translation_service.h"

namespace attn::serve {

class HttpServer {
 public:
  explicit HttpServer(ServerOptions options);  // reads --api-keys
  ~HttpServer();
  HttpServer(const HttpServer&) = delete;
  HttpServer& operator=(const HttpServer&) = delete;

  // Binds host:port; returns the port (the one chosen when port is 0). Throws naming both.
  int bind();
  // Serves until stop(); returns once the requests it accepted are answered.
  void listen();
  // From any thread: stops accepting. Requests already accepted are still answered.
  void stop();
  // The model is ready: translation endpoints and /health answer. `backend` outlives nothing
  // of the server: the queue over it is closed (its sentences decoded) by close(). `attention`:
  // the explorer's model side, run on the decoding thread (none for an ensemble: /v1/attention
  // then refuses).
  void set_backend(BatchBackend& backend, ModelInfo info, AttentionBackend* attention = nullptr);
  // After listen() returned: decodes what is left and stops the decoding thread.
  void close();

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace attn::serve
