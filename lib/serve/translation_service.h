#pragma once
// What attn-serve's API dialects share (libretranslate_api.h, native_api.h): the model's
// description, the one SentenceQueue once the model is ready, who may ask (API keys, rate
// limit), a request's fields, and the wait for its sentences, given up when the client leaves
// or the time runs out. Knows nothing of the HTTP transport beyond serve/routes.h.
#include <atomic>
#include <functional>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "decode/alignment_extraction.h"
#include "serve/access.h"
#include "serve/languages.h"
#include "serve/routes.h"
#include "serve/sentence_queue.h"
#include "serve/server_options.h"
#include "serve/text_template.h"
#include "serve/translate_request.h"

namespace attn::serve {

// What the endpoints tell of the model.
// A run directory as clients see it: its last component ("runs/en-it/" -> "en-it").
std::string public_run_name(const std::string& run_dir);

struct ModelInfo {
  LanguagePair languages;
  int beam = 1;      // bounds alternatives / nbest
  std::string name;  // the run directory (GET /v1/run reads its files)
  // What answers call the model: the run directory's own name, never the server's path to it.
  std::string public_name() const { return public_run_name(name); }
  // What /v1/translate's alignments may read (decode::cross_attention_shape); no layer: none
  // are offered, for the reason in no_alignments.
  decode::CrossAttentionShape cross_attention;
  std::string no_alignments;
  // What a request's alignment fields leave out: the run's own extraction (RUN/alignment.json).
  decode::AlignmentExtraction alignment;
};

// A request's texts as templates, and all their sentences in order.
struct Texts {
  std::vector<TextTemplate> templates;
  std::vector<std::string> sentences;
};
Texts cut_texts(const std::vector<std::string>& q, TextFormat format);

// Template t rendered with hypothesis `rank` of each of its sentences (their best when they have
// fewer); t's first sentence is results[first].
std::string render_rank(const TextTemplate& t, const std::vector<SentenceResult>& results, size_t first, size_t rank);

class TranslationService {
 public:
  explicit TranslationService(const ServerOptions& options);  // reads --api-keys
  ~TranslationService();                                      // close()
  TranslationService(const TranslationService&) = delete;
  TranslationService& operator=(const TranslationService&) = delete;

  // The model is ready: from now on requests are translated, by `backend` through a queue whose
  // batches `observer` sees.
  void start(BatchBackend& backend, ModelInfo info, QueueObserver* observer);
  // Decodes what is queued and stops the decoding thread.
  void close();
  bool ready() const { return queue_.load() != nullptr; }
  int64_t queue_depth() const;

  // The queue, or HttpError 503 while the model loads. The model's description is valid once
  // this returned.
  SentenceQueue& ready_queue();
  const ModelInfo& info() const { return info_; }
  const RequestLimits& limits() const { return options_.limits; }
  bool keys_required() const { return !api_keys_.empty(); }

  // The request's fields: its body (body_fields), or its multipart form's parts.
  nlohmann::json fields(const HttpRequest& request) const;
  // HttpError 403 without a valid API key (when keys are needed), 429 over the rate limit.
  void authorize(const std::string& api_key, const HttpRequest& request);
  // HttpError 400 when `nbest` hypotheses (`what` names the field) need a wider beam than the server's.
  void check_nbest(int nbest, const char* what) const;
  // Submits the sentences (with their target prefixes, if any: one per sentence, or none) and
  // waits for their results (in order). Gives up, dropping those not yet decoding, when the
  // client leaves (HttpError 499) or after --request-timeout (503).
  std::vector<SentenceResult> translate(SentenceQueue& queue, const HttpRequest& request,
                                        std::vector<std::string> sentences, int nbest,
                                        std::optional<decode::AlignmentExtraction> alignment = std::nullopt,
                                        std::vector<std::optional<std::string>> prefixes = {});
  // Runs `work` on the decoding thread (SentenceQueue::run_task: the model runs on that thread
  // alone) and waits for it as translate() waits: HttpError 499 when the client leaves, 503 after
  // --request-timeout, and then `work` is skipped if it has not started. Rethrows what it threw.
  void run_on_model(SentenceQueue& queue, const HttpRequest& request, std::function<void()> work);

 private:
  // Waits until done_within(kClientCheck) says done; give_up(reason) then HttpError when the
  // client leaves or the time runs out.
  void await(const HttpRequest& request, const std::function<bool(std::chrono::milliseconds)>& done_within,
             const std::function<void(DropReason)>& give_up) const;

  const ServerOptions& options_;
  std::set<std::string> api_keys_;
  RateLimiter limiter_;
  std::unique_ptr<SentenceQueue> queue_owner_;
  std::atomic<SentenceQueue*> queue_{nullptr};  // set once the model is ready
  ModelInfo info_;                              // written before queue_ is set
};

}  // namespace attn::serve
