#pragma once
// attn-serve's settings (its flags): the HTTP transport's (address, deadlines, sizes,
// connections, threads), the clients' (API keys, rate limit) and the translation's (queue,
// request limits).
#include <chrono>
#include <cstdint>
#include <string>

#include "serve/sentence_queue.h"
#include "serve/translate_request.h"

namespace attn::serve {

struct ServerOptions {
  std::string host = "127.0.0.1";
  int port = 8080;  // 0: any free port (bind() returns it)
  QueueOptions queue;
  RequestLimits limits;
  int64_t max_body_bytes = 1 << 20;        // larger bodies (chunked or not) get 413
  int64_t max_header_bytes = 16384;        // a larger request line and headers get 431
  int64_t max_attention_bytes = 32 << 20;  // of one /v1/attention answer's weights; past it 413
  std::string api_keys_file;               // empty: no keys needed
  int rate_limit = 0;                      // requests per minute per API key (or IP); 0 = none
  // Total deadlines, not inactivity timers: a request's head (from the connection's start, or
  // the end of the previous answer on a kept connection), its body (from the end of its head),
  // an answer's writing. A connection past one is closed.
  std::chrono::seconds header_timeout{10}, body_timeout{10}, write_timeout{10};
  std::chrono::seconds request_timeout{60};  // in the queue and decoding; then 503, its sentences dropped
  int max_connections = 0;                   // open at once, beyond: 503 and closed; 0 = the descriptor limit allows
  int http_threads = 128;                    // requests handled at once (each waits for its batch)
};

}  // namespace attn::serve
