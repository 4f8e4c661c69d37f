#pragma once
// attn-serve's settings (its flags): the HTTP transport's (address, timeouts, body size,
// threads), the clients' (API keys, rate limit) and the translation's (queue, request limits).
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
  int64_t max_body_bytes = 1 << 20;        // larger bodies get 413
  int64_t max_attention_bytes = 32 << 20;  // of one /v1/attention answer's weights; past it 413
  std::string api_keys_file;               // empty: no keys needed
  int rate_limit = 0;                      // requests per minute per API key (or IP); 0 = none
  std::chrono::seconds read_timeout{10}, write_timeout{10};
  std::chrono::seconds request_timeout{60};  // in the queue and decoding; then 503, its sentences dropped
  int http_threads = 128;                    // connections served at once (each waits for its batch)
};

}  // namespace attn::serve
