#include "serve/translation_service.h"

#include <filesystem>

namespace attn::serve {

std::string public_run_name(const std::string& run_dir) {
  std::filesystem::path path = std::filesystem::path(run_dir).lexically_normal();
  if (path.filename().empty()) path = path.parent_path();  // a trailing separator
  return path.filename().string();
}

using Clock = std::chrono::steady_clock;

namespace {

// How often a waiting request looks whether its client is still there.
constexpr std::chrono::milliseconds kClientCheck{50};
// The status a request whose client left is counted under in /metrics (nginx's "client closed
// request"); nobody reads the answer.
constexpr int kClientClosed = 499;

}  // namespace

Texts cut_texts(const std::vector<std::string>& q, TextFormat format) {
  Texts texts;
  for (const std::string& text : q) {
    texts.templates.push_back(format == TextFormat::html ? html_template(text) : plain_text_template(text));
    for (const std::string& sentence : texts.templates.back().sentences) texts.sentences.push_back(sentence);
  }
  return texts;
}

std::string render_rank(const TextTemplate& t, const std::vector<SentenceResult>& results, size_t first, size_t rank) {
  std::vector<std::string> translations;
  for (size_t j = 0; j < t.sentences.size(); ++j) {
    const std::vector<std::string>& texts = results[first + j].texts;
    translations.push_back(texts.empty() ? "" : texts[rank < texts.size() ? rank : 0]);
  }
  return render(t, translations);
}

TranslationService::TranslationService(const ServerOptions& options) : options_(options), limiter_(options.rate_limit) {
  if (!options_.api_keys_file.empty()) api_keys_ = read_api_keys(options_.api_keys_file);
}

TranslationService::~TranslationService() { close(); }

void TranslationService::start(BatchBackend& backend, ModelInfo info, QueueObserver* observer) {
  info_ = std::move(info);
  queue_owner_ = std::make_unique<SentenceQueue>(options_.queue, backend, observer);
  queue_.store(queue_owner_.get());
}

void TranslationService::close() {
  if (queue_owner_) queue_owner_->close();
}

int64_t TranslationService::queue_depth() const {
  const SentenceQueue* queue = queue_.load();
  return queue ? queue->depth() : 0;
}

SentenceQueue& TranslationService::ready_queue() {
  SentenceQueue* queue = queue_.load();
  if (!queue) throw HttpError(503, "Service unavailable: the model is still loading");
  return *queue;
}

nlohmann::json TranslationService::fields(const HttpRequest& request) const {
  if (!request.multipart) return body_fields(request.body, request.content_type);
  nlohmann::json fields = nlohmann::json::object();
  for (const auto& [name, content] : request.parts) {
    if (!is_valid_utf8(name) || !is_valid_utf8(content))
      throw HttpError(400, "Invalid request: the form is not valid UTF-8");
    fields[name] = content;
  }
  return fields;
}

void TranslationService::authorize(const std::string& api_key, const HttpRequest& request) {
  if (!api_keys_.empty() && !api_keys_.count(api_key))
    throw HttpError(403, api_key.empty() ? "Please contact the server operator to get an API key" : "Invalid API key");
  if (!limiter_.allow(api_key.empty() ? "ip:" + request.remote_addr : "key:" + api_key))
    throw HttpError(429, "Slowdown: more than " + std::to_string(limiter_.per_minute()) + " requests per minute");
}

void TranslationService::check_nbest(int nbest, const char* what) const {
  if (nbest > info_.beam)
    throw HttpError(400, std::string("Invalid request: ") + what + " needs a beam of at least " +
                             std::to_string(nbest) + "; this server decodes with beam " + std::to_string(info_.beam));
}

// Every kClientCheck the request looks whether its client is still there (the transport would
// only notice when the answer fails to go out): one that left gets its waiting sentences
// dropped, so it costs no more than the sentences already decoding.
std::vector<SentenceResult> TranslationService::translate(SentenceQueue& queue, const HttpRequest& request,
                                                          std::vector<std::string> sentences, int nbest,
                                                          std::optional<decode::AlignmentExtraction> alignment,
                                                          std::vector<std::optional<std::string>> prefixes) {
  check_sentence_count(int64_t(sentences.size()), options_.limits);
  const std::shared_ptr<PendingRequest> pending =
      queue.submit(std::move(sentences), nbest, alignment, std::move(prefixes));
  await(
      request, [&](std::chrono::milliseconds timeout) { return pending->wait_for(timeout); },
      [&](DropReason reason) { pending->cancel(reason); });
  return pending->wait();
}

// A task that has started is waited for even when the request gives up: `work` may use what
// the caller's frame holds.
void TranslationService::run_on_model(SentenceQueue& queue, const HttpRequest& request, std::function<void()> work) {
  enum State { waiting, started, abandoned };
  const auto state = std::make_shared<std::atomic<int>>(waiting);
  std::future<void> done = queue.run_task([state, &work] {
    int expected = waiting;
    if (state->compare_exchange_strong(expected, started)) work();
  });
  await(
      request, [&](std::chrono::milliseconds timeout) { return done.wait_for(timeout) == std::future_status::ready; },
      [&](DropReason) {
        int expected = waiting;
        if (!state->compare_exchange_strong(expected, abandoned)) done.wait();
      });
  done.get();
}

void TranslationService::await(const HttpRequest& request,
                               const std::function<bool(std::chrono::milliseconds)>& done_within,
                               const std::function<void(DropReason)>& give_up) const {
  const auto deadline = Clock::now() + options_.request_timeout;
  while (!done_within(kClientCheck)) {
    if (Clock::now() >= deadline) {
      give_up(DropReason::timeout);
      throw HttpError(503, "Service unavailable: the translation took over " +
                               std::to_string(options_.request_timeout.count()) + " s");
    }
    if (request.client_gone()) {
      give_up(DropReason::client_gone);
      throw HttpError(kClientClosed, "the client closed the connection before its answer");
    }
  }
}

}  // namespace attn::serve
