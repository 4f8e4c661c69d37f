#include "serve/http_server.h"

#include <atomic>
#include <cerrno>
#include <cstring>
#include <httplib.h>
#include <set>
#include <spdlog/spdlog.h>
#include <sys/socket.h>
#include <thread>

#include "align/links.h"
#include "core/check.h"
#include "serve/access.h"
#include "serve/client_socket.h"
#include "serve/metrics.h"
#include "serve/text_template.h"

namespace attn::serve {

using nlohmann::json;
using Clock = std::chrono::steady_clock;

namespace {

void set_json(httplib::Response& res, int status, const json& body) {
  res.status = status;
  res.set_content(body.dump(-1, ' ', false, json::error_handler_t::replace), "application/json");
}

void set_error(httplib::Response& res, int status, const std::string& message) {
  set_json(res, status, {{"error", message}});
}

// How often a waiting request looks whether its client is still there.
constexpr std::chrono::milliseconds kClientCheck{50};
// The status a request whose client left is counted under in /metrics (nginx's "client closed
// request"); nobody reads the answer.
constexpr int kClientClosed = 499;

// LibreTranslate's source for "detect the language" (not a config choice).
const std::string kDetectSource = "auto";

// The refusals httplib makes itself, in words.
std::string reason(int status) {
  switch (status) {
    case 400:
      return "Bad request";
    case 404:
      return "Not found";
    case 405:
      return "Method not allowed";
    case 408:
      return "Request timeout";
    case 413:
      return "Payload too large";
    case 414:
      return "URI too long";
    case 416:
      return "Range not satisfiable";
    default:
      return "HTTP status " + std::to_string(status);
  }
}

// A request's texts as templates, and all their sentences in order.
struct Texts {
  std::vector<TextTemplate> templates;
  std::vector<std::string> sentences;
};

Texts cut_texts(const std::vector<std::string>& q, TextFormat format) {
  Texts texts;
  for (const std::string& text : q) {
    texts.templates.push_back(format == TextFormat::html ? html_template(text) : plain_text_template(text));
    for (const std::string& sentence : texts.templates.back().sentences) texts.sentences.push_back(sentence);
  }
  return texts;
}

// Template t rendered with hypothesis `rank` of each of its sentences (their best when they have fewer).
std::string render_rank(const TextTemplate& t, const std::vector<SentenceResult>& results, size_t first, size_t rank) {
  std::vector<std::string> translations;
  for (size_t j = 0; j < t.sentences.size(); ++j) {
    const std::vector<std::string>& texts = results[first + j].texts;
    translations.push_back(texts.empty() ? "" : texts[rank < texts.size() ? rank : 0]);
  }
  return render(t, translations);
}

}  // namespace

struct HttpServer::Impl {
  ServerOptions options;
  std::set<std::string> api_keys;
  RateLimiter limiter;
  Metrics metrics;
  httplib::Server http;
  std::unique_ptr<SentenceQueue> queue_owner;
  std::atomic<SentenceQueue*> queue{nullptr};  // set once the model is ready
  ModelInfo info;                              // written before queue is set
  std::atomic<bool> stopping{false}, listen_returned{false};
  int listening_socket = -1;

  explicit Impl(ServerOptions server_options) : options(std::move(server_options)), limiter(options.rate_limit) {
    if (!options.api_keys_file.empty()) api_keys = read_api_keys(options.api_keys_file);
    configure();
  }

  void configure() {
    const int threads = std::max(1, options.http_threads);
    http.new_task_queue = [threads] { return new httplib::ThreadPool(size_t(threads)); };
    http.set_read_timeout(options.read_timeout.count());
    http.set_write_timeout(options.write_timeout.count());
    http.set_keep_alive_timeout(std::min<time_t>(5, options.read_timeout.count()));
    http.set_payload_max_length(size_t(options.max_body_bytes));
    // Debian's httplib is built with a listen backlog of 5: a burst of connections beyond it is
    // dropped (clients see a read error). The socket is kept so bind() can widen the backlog.
    http.set_socket_options([this](socket_t socket) {
      int yes = 1;
      setsockopt(socket, SOL_SOCKET, SO_REUSEADDR, &yes, sizeof(yes));
      listening_socket = socket;
    });
    // httplib's own refusals (413, 404, a malformed request line) get LibreTranslate's body too.
    http.set_error_handler(
        httplib::Server::HandlerWithResponse([this](const httplib::Request& req, httplib::Response& res) {
          if (!res.body.empty()) return httplib::Server::HandlerResponse::Unhandled;  // an endpoint's error
          std::string message = reason(res.status);
          if (res.status == 413) message += ": the body is over " + std::to_string(options.max_body_bytes) + " bytes";
          set_error(res, res.status, message);
          metrics.request_done(res.status == 404 ? "other" : req.path, res.status, 0.0);
          return httplib::Server::HandlerResponse::Handled;
        }));
    http.Post("/translate", endpoint("/translate", [this](const auto& req, auto& res) { libre_translate(req, res); }));
    http.Post("/v1/translate",
              endpoint("/v1/translate", [this](const auto& req, auto& res) { native_translate(req, res); }));
    http.Post("/detect", endpoint("/detect", [this](const auto& req, auto& res) { detect(req, res); }));
    http.Get("/languages", endpoint("/languages", [this](const auto&, auto& res) { languages(res); }));
    http.Get("/frontend/settings", endpoint("/frontend/settings", [this](const auto&, auto& res) { settings(res); }));
    http.Get("/health", endpoint("/health", [this](const auto&, auto& res) { health(res); }));
    http.Get("/metrics", endpoint("/metrics", [this](const auto&, auto& res) {
               const SentenceQueue* q = queue.load();
               res.status = 200;
               res.set_content(metrics.prometheus_text(q ? q->depth() : 0), "text/plain; version=0.0.4");
             }));
  }

  // Every endpoint: its errors as {"error": ...} with their status, and its metrics.
  template <class Body>
  httplib::Server::Handler endpoint(std::string name, Body body) {
    return [this, name, body](const httplib::Request& req, httplib::Response& res) {
      const auto start = Clock::now();
      try {
        body(req, res);
      } catch (const HttpError& error) {
        set_error(res, error.status(), error.what());
      } catch (const QueueFull& error) {
        set_error(res, 503, std::string("Service unavailable: ") + error.what() + "; try again shortly");
        res.set_header("Retry-After", "1");
      } catch (const std::exception& error) {
        spdlog::error("{}: {}", name, error.what());
        set_error(res, 500, error.what());
      }
      metrics.request_done(name, res.status, std::chrono::duration<double>(Clock::now() - start).count());
    };
  }

  SentenceQueue& ready_queue() {
    SentenceQueue* q = queue.load();
    if (!q) throw HttpError(503, "Service unavailable: the model is still loading");
    return *q;
  }

  json fields_of(const httplib::Request& req) {
    if (!req.is_multipart_form_data()) return body_fields(req.body, req.get_header_value("Content-Type"));
    json fields = json::object();
    for (const auto& [name, part] : req.files) {
      if (!is_valid_utf8(name) || !is_valid_utf8(part.content))
        throw HttpError(400, "Invalid request: the form is not valid UTF-8");
      fields[name] = part.content;
    }
    return fields;
  }

  void authorize(const std::string& api_key, const httplib::Request& req) {
    if (!api_keys.empty() && !api_keys.count(api_key))
      throw HttpError(403,
                      api_key.empty() ? "Please contact the server operator to get an API key" : "Invalid API key");
    if (!limiter.allow(api_key.empty() ? "ip:" + req.remote_addr : "key:" + api_key))
      throw HttpError(429, "Slowdown: more than " + std::to_string(limiter.per_minute()) + " requests per minute");
  }

  // Submits the sentences and waits for them. Every kClientCheck it looks whether the client
  // is still there (httplib would only notice when the answer fails to go out): one that left
  // gets its waiting sentences dropped, so it costs no more than the sentences already decoding.
  std::vector<SentenceResult> translate(SentenceQueue& q, const httplib::Request& req,
                                        std::vector<std::string> sentences, int nbest,
                                        std::optional<decode::AlignmentExtraction> alignment = std::nullopt) {
    check_sentence_count(int64_t(sentences.size()), options.limits);
    const std::shared_ptr<PendingRequest> pending = q.submit(std::move(sentences), nbest, alignment);
    const auto deadline = Clock::now() + options.request_timeout;
    int client_fd = -2;  // not looked for yet: most requests are answered within one check
    while (!pending->wait_for(kClientCheck)) {
      if (Clock::now() >= deadline) {
        pending->cancel(DropReason::timeout);
        throw HttpError(503, "Service unavailable: the translation took over " +
                                 std::to_string(options.request_timeout.count()) + " s");
      }
      if (client_fd == -2)
        client_fd = connection_socket(req.local_addr, req.local_port, req.remote_addr, req.remote_port);
      if (client_fd >= 0 && peer_closed(client_fd)) {
        pending->cancel(DropReason::client_gone);
        throw HttpError(kClientClosed, "the client closed the connection before its answer");
      }
    }
    return pending->wait();
  }

  void check_nbest(int nbest, const char* what) {
    if (nbest > info.beam)
      throw HttpError(400, std::string("Invalid request: ") + what + " needs a beam of at least " +
                               std::to_string(nbest) + "; this server decodes with beam " + std::to_string(info.beam));
  }

  void libre_translate(const httplib::Request& req, httplib::Response& res) {
    SentenceQueue& q = ready_queue();
    const TranslateRequest request = parse_translate_request(fields_of(req));
    authorize(request.api_key, req);
    if (request.source != kDetectSource && request.source != info.languages.source)
      throw HttpError(400, request.source + " is not supported");
    if (request.target != info.languages.target) throw HttpError(400, request.target + " is not supported");
    check_text_size(request.q, options.limits);
    check_nbest(request.alternatives + 1, "alternatives");
    Texts texts = cut_texts(request.q, request.format);
    const std::vector<SentenceResult> results = translate(q, req, std::move(texts.sentences), request.alternatives + 1);

    json translated = json::array(), alternatives = json::array();
    size_t first = 0;
    for (const TextTemplate& t : texts.templates) {
      translated.push_back(render_rank(t, results, first, 0));
      json others = json::array();
      for (int rank = 1; rank <= request.alternatives; ++rank) others.push_back(render_rank(t, results, first, rank));
      alternatives.push_back(others);
      first += t.sentences.size();
    }
    json answer = {{"translatedText", request.batch ? translated : translated[0]}};
    if (request.alternatives > 0) answer["alternatives"] = request.batch ? alternatives : alternatives[0];
    if (request.source == kDetectSource) {
      // One source language: detection has one answer, given with LibreTranslate's fields.
      const json detected = {{"confidence", 100.0}, {"language", info.languages.source}};
      answer["detectedLanguage"] = request.batch ? json(std::vector<json>(request.q.size(), detected)) : detected;
    }
    set_json(res, 200, answer);
  }

  // The layer and head asked for exist in the model (as decode::cross_alignment words it).
  void check_alignments(const decode::AlignmentExtraction& extraction) {
    const decode::CrossAttentionShape& shape = info.cross_attention;
    if (shape.layers == 0)
      throw HttpError(400, "Invalid request: alignments are not available from this server: " + info.no_alignments);
    const int layer = extraction.layer < 0 ? shape.layers + extraction.layer : extraction.layer;
    const std::string layers = std::to_string(shape.layers);
    if (layer < 0 || layer >= shape.layers)
      throw HttpError(400, "Invalid request: alignment_layer " + std::to_string(extraction.layer) +
                               " is out of range: the model has " + layers + " layer(s) of cross attention (0 to " +
                               std::to_string(shape.layers - 1) + ", or -1 to -" + layers + ")");
    const int heads = shape.heads[size_t(layer)];
    if (extraction.head && *extraction.head >= heads)
      throw HttpError(400, "Invalid request: alignment_head " + std::to_string(*extraction.head) +
                               " is out of range: layer " + std::to_string(layer) + " has " + std::to_string(heads) +
                               " head(s) (0 to " + std::to_string(heads - 1) + ", or \"mean\")");
  }

  void native_translate(const httplib::Request& req, httplib::Response& res) {
    SentenceQueue& q = ready_queue();
    const NativeRequest request = parse_native_request(fields_of(req), info.alignment);
    authorize(request.api_key, req);
    check_text_size(request.q, options.limits);
    check_nbest(request.nbest, "nbest");
    if (request.alignments) check_alignments(*request.alignments);
    Texts texts = cut_texts(request.q, TextFormat::text);
    const std::vector<SentenceResult> results = translate(q, req, texts.sentences, request.nbest, request.alignments);
    // Hypothesis k's links as Pharaoh "i-j" pairs (attn-translate --alignments' part after "|||").
    const auto alignment = [](const SentenceResult& result, size_t k) {
      return k < result.alignments.size() ? align::pharaoh_line(result.alignments[k]) : std::string();
    };
    json translations = json::array();
    size_t first = 0;
    for (const TextTemplate& t : texts.templates) {
      json sentences = json::array();
      for (size_t j = 0; j < t.sentences.size(); ++j) {
        const SentenceResult& result = results[first + j];
        json nbest = json::array();
        for (size_t k = 0; k < result.hypotheses.size(); ++k) {
          nbest.push_back({{"text", result.texts[k]},
                           {"score", result.hypotheses[k].score},
                           {"log_prob", result.hypotheses[k].log_prob},
                           {"tokens", result.hypotheses[k].tokens.size()}});
          if (request.alignments) nbest.back()["alignment"] = alignment(result, k);
        }
        json sentence = {{"source", t.sentences[j]}, {"source_tokens", result.source_tokens}, {"nbest", nbest}};
        sentence["text"] = result.texts.empty() ? "" : result.texts.front();
        sentence["score"] = result.hypotheses.empty() ? 0.f : result.hypotheses.front().score;
        if (request.alignments) sentence["alignment"] = alignment(result, 0);
        sentences.push_back(sentence);
      }
      translations.push_back({{"text", render_rank(t, results, first, 0)}, {"sentences", sentences}});
      first += t.sentences.size();
    }
    set_json(res, 200,
             {{"translations", translations},
              {"model", info.name},
              {"source", info.languages.source},
              {"target", info.languages.target}});
  }

  // attn has no language identifier: the answer is the run's source language, the only one it
  // translates, sure of it (100) for a text with a character other than white space, as
  // /translate's "auto" source is.
  void detect(const httplib::Request& req, httplib::Response& res) {
    ready_queue();
    const DetectRequest request = parse_detect_request(fields_of(req));
    authorize(request.api_key, req);
    check_text_size(request.q, options.limits);
    bool has_text = false;
    for (const std::string& text : request.q) has_text |= text.find_first_not_of(" \t\r\n") != std::string::npos;
    set_json(res, 200, json::array({{{"confidence", has_text ? 100.0 : 0.0}, {"language", info.languages.source}}}));
  }

  void languages(httplib::Response& res) {
    ready_queue();
    const LanguagePair& pair = info.languages;
    set_json(res, 200,
             json::array({{{"code", pair.source}, {"name", language_name(pair.source)}, {"targets", {pair.target}}},
                          {{"code", pair.target}, {"name", language_name(pair.target)}, {"targets", json::array()}}}));
  }

  void settings(httplib::Response& res) {
    ready_queue();
    const auto language = [](const std::string& code) { return json{{"code", code}, {"name", language_name(code)}}; };
    set_json(
        res, 200,
        {{"charLimit", options.limits.char_limit > 0 ? options.limits.char_limit : -1},
         {"frontendTimeout", 500},
         {"apiKeys", !api_keys.empty()},
         {"keyRequired", !api_keys.empty()},
         {"suggestions", false},
         {"filesTranslation", false},
         {"supportedFilesFormat", json::array()},
         {"language", {{"source", language(info.languages.source)}, {"target", language(info.languages.target)}}}});
  }

  void health(httplib::Response& res) {
    if (stopping)
      set_json(res, 503, {{"status", "stopping"}});
    else if (!queue.load())
      set_json(res, 503, {{"status", "loading"}});
    else
      set_json(res, 200, {{"status", "ok"}});
  }
};

HttpServer::HttpServer(ServerOptions options) : impl_(std::make_unique<Impl>(std::move(options))) {}

HttpServer::~HttpServer() {
  if (impl_->queue_owner) impl_->queue_owner->close();
}

int HttpServer::bind() {
  const ServerOptions& o = impl_->options;
  errno = 0;
  int port = o.port;
  if (o.port == 0)
    port = impl_->http.bind_to_any_port(o.host);
  else if (!impl_->http.bind_to_port(o.host, o.port))
    port = -1;
  const int error = errno;
  ATTN_CHECK(port > 0 || error != EADDRINUSE, "cannot listen on ", o.host, ":", o.port,
             ": the port is in use by another process; choose another with --port (0: any free port)");
  ATTN_CHECK(port > 0, "cannot listen on ", o.host, ":", o.port, error ? std::string(": ") + std::strerror(error) : "",
             " (--host, --port)");
  // listen() again on a listening socket only sets its backlog (Linux).
  if (impl_->listening_socket >= 0) ::listen(impl_->listening_socket, SOMAXCONN);
  return port;
}

void HttpServer::listen() {
  impl_->http.listen_after_bind();
  impl_->listen_returned = true;
}

void HttpServer::stop() {
  impl_->stopping = true;
  // httplib's stop() does nothing before its listen loop runs: wait for it (or for its end).
  const auto deadline = Clock::now() + std::chrono::seconds(10);
  while (!impl_->http.is_running() && !impl_->listen_returned && Clock::now() < deadline)
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  impl_->http.stop();
}

void HttpServer::set_backend(BatchBackend& backend, ModelInfo info) {
  impl_->info = std::move(info);
  impl_->queue_owner = std::make_unique<SentenceQueue>(impl_->options.queue, backend, &impl_->metrics);
  impl_->queue.store(impl_->queue_owner.get());
}

void HttpServer::close() {
  if (impl_->queue_owner) impl_->queue_owner->close();
}

}  // namespace attn::serve
