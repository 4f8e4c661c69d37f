#pragma once
// attn-serve's HTTP side (cpp-httplib): the endpoints, the limits and the order of shutdown.
//
//   POST /translate, GET /languages, GET /frontend/settings   LibreTranslate's API
//   POST /detect                                               LibreTranslate's: the run's source language
//   POST /v1/translate                                         attn's own: scores, n-best, word alignments
//   GET /health (503 until set_backend), GET /metrics (Prometheus)
//
//   HttpServer server(options);
//   int port = server.bind();                 // before the model loads: /health answers 503
//   std::thread http([&] { server.listen(); });
//   server.set_backend(std::move(backend), info);
//   ... stop() from the signal thread; http.join(): every accepted request answered
#include <chrono>
#include <cstdint>
#include <memory>
#include <string>

#include "serve/languages.h"
#include "serve/sentence_queue.h"
#include "serve/translate_request.h"

namespace attn::serve {

struct ServerOptions {
  std::string host = "127.0.0.1";
  int port = 8080;  // 0: any free port (bind() returns it)
  QueueOptions queue;
  RequestLimits limits;
  int64_t max_body_bytes = 1 << 20;  // larger bodies get 413
  std::string api_keys_file;         // empty: no keys needed
  int rate_limit = 0;                // requests per minute per API key (or IP); 0 = none
  std::chrono::seconds read_timeout{10}, write_timeout{10};
  std::chrono::seconds request_timeout{60};  // in the queue and decoding; then 503, its sentences dropped
  int http_threads = 128;                    // connections served at once (each waits for its batch)
};

// What the endpoints tell of the model.
struct ModelInfo {
  LanguagePair languages;
  int beam = 1;      // bounds alternatives / nbest
  std::string name;  // the run directory, for /v1/translate's answer
  // What /v1/translate's alignments may read (decode::cross_attention_shape); no layer: none
  // are offered, for the reason in no_alignments.
  decode::CrossAttentionShape cross_attention;
  std::string no_alignments;
  // What a request's alignment fields leave out: the run's own extraction (RUN/alignment.json).
  decode::AlignmentExtraction alignment;
};

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
  // of the server: the queue over it is closed (its sentences decoded) by close().
  void set_backend(BatchBackend& backend, ModelInfo info);
  // After listen() returned: decodes what is left and stops the decoding thread.
  void close();

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace attn::serve
