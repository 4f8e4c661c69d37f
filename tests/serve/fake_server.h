#pragma once
// The serving tests' server: attn-serve's HttpServer in-process on 127.0.0.1:<any free port>,
// over a fake backend that reverses each sentence (no model), with small limits.
#include <atomic>
#include <chrono>
#include <httplib.h>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include <catch2/catch.hpp>

#include "serve/http_server.h"
#include "wait_until.h"

namespace attn::testing {

class ReversingBackend : public serve::BatchBackend {
 public:
  std::vector<std::vector<int32_t>> encode(const std::vector<std::string>& texts) override {
    std::vector<std::vector<int32_t>> out;
    for (const std::string& text : texts) {
      out.push_back({int32_t(sources.size())});  // an id that names the text
      std::lock_guard<std::mutex> lock(mutex);
      sources.push_back(text);
    }
    return out;
  }
  // With alignments: hypothesis k links source position i to target position i + k.
  std::vector<serve::SentenceResult> decode(
      const std::vector<const std::vector<int32_t>*>& sentences, int nbest,
      const std::vector<std::optional<attn::decode::AlignmentExtraction>>& alignments,
      const std::vector<std::optional<std::string>>& prefixes) override {
    ++decodes_started;
    if (delay.count() > 0) std::this_thread::sleep_for(delay);
    std::vector<serve::SentenceResult> results;
    for (size_t i = 0; i < sentences.size(); ++i) {
      const auto* sentence = sentences[i];
      std::string text;
      {
        std::lock_guard<std::mutex> lock(mutex);
        text = sources.at(size_t(sentence->front()));
      }
      serve::SentenceResult result;
      for (int k = 0; k < nbest; ++k) {
        const std::string reversed = prefixes[i].value_or("") + std::string(text.rbegin(), text.rend());
        result.texts.push_back(k == 0 ? reversed : reversed + " (" + std::to_string(k) + ")");
        attn::decode::Hypothesis hypothesis;
        hypothesis.tokens = {1, 2};
        hypothesis.score = -float(k) - 0.5f;
        result.hypotheses.push_back(hypothesis);
        if (alignments[i]) result.alignments.push_back({{0, k}, {1, k + 1}});
      }
      if (alignments[i]) last_alignment = *alignments[i];
      results.push_back(result);
    }
    return results;
  }
  std::mutex mutex;
  std::vector<std::string> sources;
  std::chrono::milliseconds delay{0};
  std::atomic<int> decodes_started{0};
  attn::decode::AlignmentExtraction last_alignment;  // of the last sentence that asked for links

  // Waits (at most 10 s) until a batch is decoding: on a loaded machine a fixed sleep can end
  // before the request was even accepted.
  void wait_until_decoding() const {
    REQUIRE(wait_until([&] { return decodes_started > 0; }, 10));
  }
};

// The fake model: en -> it, beam 3, two cross-attention layers of four heads.
inline serve::ModelInfo fake_model() {
  serve::ModelInfo info;
  info.languages = {"en", "it"};
  info.beam = 3;
  info.name = "fake";
  info.cross_attention.layers = 2;
  info.cross_attention.heads = {4, 4};
  return info;
}

// A server on 127.0.0.1:<any free port>, listening on a thread of its own.
struct RunningServer {
  explicit RunningServer(serve::ServerOptions options, bool ready = true) : server(with_any_port(options)) {
    port = server.bind();
    thread = std::thread([this] { server.listen(); });
    if (ready) server.set_backend(backend, fake_model());
  }
  ~RunningServer() {
    server.stop();
    thread.join();
    server.close();
  }
  static serve::ServerOptions with_any_port(serve::ServerOptions options) {
    options.port = 0;
    return options;
  }
  httplib::Client client() const {
    httplib::Client c("127.0.0.1", port);
    c.set_read_timeout(10, 0);
    return c;
  }
  ReversingBackend backend;
  serve::HttpServer server;
  int port = 0;
  std::thread thread;
};

inline serve::ServerOptions small_limits() {
  serve::ServerOptions options;
  options.queue.batch_size = 4;
  options.queue.max_wait = std::chrono::milliseconds(2);
  options.limits = {100, 5};
  options.max_body_bytes = 4096;
  return options;
}

}  // namespace attn::testing
