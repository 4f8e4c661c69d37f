#include "serve/libretranslate_api.h"

namespace attn::serve {

using nlohmann::json;

namespace {

// LibreTranslate's source for "detect the language" (not a config choice).
const std::string kDetectSource = "auto";

// The answer's texts: per text its best translation and its `alternatives` others.
json translated_texts(const TranslateRequest& request, const Texts& texts, const std::vector<SentenceResult>& results,
                      const LanguagePair& languages) {
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
    const json detected = {{"confidence", 100.0}, {"language", languages.source}};
    answer["detectedLanguage"] = request.batch ? json(std::vector<json>(request.q.size(), detected)) : detected;
  }
  return answer;
}

void translate(TranslationService& service, const HttpRequest& http, HttpResponse& response) {
  SentenceQueue& queue = service.ready_queue();
  const LanguagePair& languages = service.info().languages;
  const TranslateRequest request = parse_translate_request(service.fields(http));
  service.authorize(request.api_key, http);
  if (request.source != kDetectSource && request.source != languages.source)
    throw HttpError(400, request.source + " is not supported");
  if (request.target != languages.target) throw HttpError(400, request.target + " is not supported");
  check_text_size(request.q, service.limits());
  service.check_nbest(request.alternatives + 1, "alternatives");
  Texts texts = cut_texts(request.q, request.format);
  const std::vector<SentenceResult> results =
      service.translate(queue, http, std::move(texts.sentences), request.alternatives + 1);
  set_json(response, 200, translated_texts(request, texts, results, languages));
}

// attn has no language identifier: the answer is the run's source language, the only one it
// translates, sure of it (100) for a text with a character other than white space, as
// /translate's "auto" source is.
void detect(TranslationService& service, const HttpRequest& http, HttpResponse& response) {
  service.ready_queue();
  const DetectRequest request = parse_detect_request(service.fields(http));
  service.authorize(request.api_key, http);
  check_text_size(request.q, service.limits());
  bool has_text = false;
  for (const std::string& text : request.q) has_text |= text.find_first_not_of(" \t\r\n") != std::string::npos;
  set_json(response, 200,
           json::array({{{"confidence", has_text ? 100.0 : 0.0}, {"language", service.info().languages.source}}}));
}

void languages(TranslationService& service, HttpResponse& response) {
  service.ready_queue();
  const LanguagePair& pair = service.info().languages;
  set_json(response, 200,
           json::array({{{"code", pair.source}, {"name", language_name(pair.source)}, {"targets", {pair.target}}},
                        {{"code", pair.target}, {"name", language_name(pair.target)}, {"targets", json::array()}}}));
}

void settings(TranslationService& service, HttpResponse& response) {
  service.ready_queue();
  const LanguagePair& pair = service.info().languages;
  const int64_t char_limit = service.limits().char_limit;
  const auto language = [](const std::string& code) { return json{{"code", code}, {"name", language_name(code)}}; };
  set_json(response, 200,
           {{"charLimit", char_limit > 0 ? char_limit : -1},
            {"frontendTimeout", 500},
            {"apiKeys", service.keys_required()},
            {"keyRequired", service.keys_required()},
            {"suggestions", false},
            {"filesTranslation", false},
            {"supportedFilesFormat", json::array()},
            {"language", {{"source", language(pair.source)}, {"target", language(pair.target)}}}});
}

}  // namespace

void add_libretranslate_api(Routes& routes, TranslationService& service) {
  routes.post("/translate", [&service](const HttpRequest& request, HttpResponse& response) {
    translate(service, request, response);
  });
  routes.post("/detect",
              [&service](const HttpRequest& request, HttpResponse& response) { detect(service, request, response); });
  routes.get("/languages", [&service](const HttpRequest&, HttpResponse& response) { languages(service, response); });
  routes.get("/frontend/settings",
             [&service](const HttpRequest&, HttpResponse& response) { settings(service, response); });
}

}  // namespace attn::serve
