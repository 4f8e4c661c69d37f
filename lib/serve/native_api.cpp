#include "serve/native_api.h"

#include "align/links.h"

namespace attn::serve {

using nlohmann::json;

namespace {

// The layer and head asked for exist in the model (as decode::cross_alignment words it).
void check_alignments(const ModelInfo& info, const decode::AlignmentExtraction& extraction) {
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

// Hypothesis k's links as Pharaoh "i-j" pairs (attn-translate --alignments' part after "|||").
std::string alignment(const SentenceResult& result, size_t k) {
  return k < result.alignments.size() ? align::pharaoh_line(result.alignments[k]) : std::string();
}

// One sentence of the answer: its source, best translation and n-best list.
json sentence_answer(const std::string& source, const SentenceResult& result, bool alignments) {
  json nbest = json::array();
  for (size_t k = 0; k < result.hypotheses.size(); ++k) {
    nbest.push_back({{"text", result.texts[k]},
                     {"score", result.hypotheses[k].score},
                     {"log_prob", result.hypotheses[k].log_prob},
                     {"tokens", result.hypotheses[k].tokens.size()}});
    if (alignments) nbest.back()["alignment"] = alignment(result, k);
  }
  json sentence = {{"source", source}, {"source_tokens", result.source_tokens}, {"nbest", nbest}};
  sentence["text"] = result.texts.empty() ? "" : result.texts.front();
  sentence["score"] = result.hypotheses.empty() ? 0.f : result.hypotheses.front().score;
  if (alignments) sentence["alignment"] = alignment(result, 0);
  return sentence;
}

void translate(TranslationService& service, const HttpRequest& http, HttpResponse& response) {
  SentenceQueue& queue = service.ready_queue();
  const ModelInfo& info = service.info();
  const NativeRequest request = parse_native_request(service.fields(http), info.alignment);
  service.authorize(request.api_key, http);
  check_text_size(request.q, service.limits());
  service.check_nbest(request.nbest, "nbest");
  if (request.alignments) check_alignments(info, *request.alignments);
  Texts texts = cut_texts(request.q, TextFormat::text);
  const std::vector<SentenceResult> results = service.translate(
      queue, http, texts.sentences, request.nbest, request.alignments, sentence_prefixes(request, texts.templates));
  json translations = json::array();
  size_t first = 0;
  for (const TextTemplate& t : texts.templates) {
    json sentences = json::array();
    for (size_t j = 0; j < t.sentences.size(); ++j)
      sentences.push_back(sentence_answer(t.sentences[j], results[first + j], request.alignments.has_value()));
    translations.push_back({{"text", render_rank(t, results, first, 0)}, {"sentences", sentences}});
    first += t.sentences.size();
  }
  set_json(response, 200,
           {{"translations", translations},
            {"model", info.public_name()},
            {"source", info.languages.source},
            {"target", info.languages.target}});
}

}  // namespace

void add_native_api(Routes& routes, TranslationService& service) {
  routes.post("/v1/translate", [&service](const HttpRequest& request, HttpResponse& response) {
    translate(service, request, response);
  });
}

}  // namespace attn::serve
