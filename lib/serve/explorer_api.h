#pragma once
// attn-serve's attention explorer (docs/ARCHITECTURE.md, "The attention explorer"):
//
//   GET /              the page (explorer_page.h): translate, attention maps, the run's curves
//   POST /v1/attention the attention maps of sentence pairs (attention_json.h's document):
//       {"q": "lines", "target": "lines" (forced mode; else the model translates), "beam": 2,
//        "kinds": ["cross"], "layers": [0], "heads": [0, 1], "api_key": "..."}
//       q's sentences are cut as /v1/translate cuts them (its non-blank lines); the limits are
//       /translate's (characters, sentences, API keys, rate limit), and the answer's maps are
//       bounded by --max-attention-bytes (413 past it).
//   GET /v1/run        the run's config.json and train.log.jsonl records (a long log thinned
//                      to a bounded size), polled by the page while a run trains
//
// The model runs on the decoding thread alone: an attention request is a task of the sentence
// queue (TranslationService::run_on_model), done between two batches.
#include <atomic>
#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "serve/attention_json.h"
#include "serve/routes.h"
#include "serve/translation_service.h"

namespace attn::serve {

struct AttentionQuery {
  std::vector<std::string> sources;
  std::vector<std::string> targets;  // one per source (forced mode), or none: the model translates
  int beam = 1;
  AttentionFilter filter;
  int64_t max_bytes = 0;  // of the maps' weights (AttentionJson); 0 = none
};

// The model's side, called on the decoding thread: attention_json.h's document for a query.
// Throws HttpError for a filter the model does not fit and past max_bytes.
class AttentionBackend {
 public:
  virtual ~AttentionBackend() = default;
  virtual nlohmann::json attention(const AttentionQuery& query) = 0;
};

// The fields of a POST /v1/attention body (HttpError 400 naming a bad one); beam defaults to
// `beam` and may not exceed it.
AttentionQuery parse_attention_request(const nlohmann::json& fields, int beam, std::string* api_key);

// `backend` stays null while the model loads, and for an ensemble (a request then gets 400).
void add_explorer_api(Routes& routes, TranslationService& service, const std::atomic<AttentionBackend*>& backend,
                      int64_t max_attention_bytes);

// GET /v1/run's answer for `run_dir`: {"run", "config", "log": [records], "log_stride",
// "log_bytes"}; the run and every path of its config by file name only (no server directory). A log over max_log_bytes
// keeps every valid record and every log_stride-th train record (and the last), so the answer stays near that size
// however long the run.
nlohmann::json run_summary(const std::string& run_dir, int64_t max_log_bytes);

}  // namespace attn::serve
