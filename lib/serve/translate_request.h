#pragma once
// The bodies attn-serve accepts, read into requests, and the errors a bad one gets. Pure
// functions of the bytes, so the libFuzzer target (tests/fuzz/fuzz_serve_request.cpp) runs them.
//
// LibreTranslate's POST /translate (its clients send JSON, or form fields as its Python and
// JavaScript clients do):
//   {"q": "Hello" | ["Hello", "Bye"], "source": "en" | "auto", "target": "it",
//    "format": "text" | "html", "alternatives": 2, "api_key": "..."}
// attn's POST /v1/translate (JSON; form fields as strings):
//   {"q": "Hello" | [...], "nbest": 3, "alignments": false | true | "words" | "pieces",
//    "alignment_layer": -1, "alignment_head": "mean" | 0, "alignment_shift": 0 | 1,
//    "alignment_threshold": 0.0, "alignment_words": "mean" | "any",
//    "prefix": "Ciao" | ["Ciao", ""], "api_key": "..."}
// The alignment_* fields are attn-translate's --alignment-* flags, with their defaults; like
// the flags they need alignments. prefix is the target prefix of each text of q (a string: of
// every text; an array: one per text, "" for none), as attn-translate's --prefix: the text's
// translation starts with it (its first sentence's does, for a text of several lines).
#include <cstdint>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "decode/alignment_extraction.h"
#include "serve/text_template.h"

namespace attn::serve {

// A request the server answers with `status` and {"error": message} (LibreTranslate's form).
class HttpError : public std::runtime_error {
 public:
  HttpError(int status, const std::string& message) : std::runtime_error(message), status_(status) {}
  int status() const { return status_; }

 private:
  int status_;
};

enum class TextFormat { text, html };

struct TranslateRequest {
  std::vector<std::string> q;  // the texts; one for a string q
  bool batch = false;          // q was an array: the answer's fields are arrays too
  std::string source, target;  // as the client named them ("auto" allowed for source)
  TextFormat format = TextFormat::text;
  int alternatives = 0;  // further translations wanted per text, beyond the best
  std::string api_key;
};

// LibreTranslate's POST /detect: {"q": "Hello", "api_key": "..."} (its Python client sends a form).
struct DetectRequest {
  std::vector<std::string> q;
  std::string api_key;
};

struct NativeRequest {
  std::vector<std::string> q;
  bool batch = false;
  int nbest = 1;                                          // hypotheses per sentence, best first
  std::optional<decode::AlignmentExtraction> alignments;  // set: each hypothesis' word links
  std::vector<std::string> prefix;  // one per text of q ("" for none); empty: the field was left out
  std::string api_key;
};

// Per sentence of the texts cut into `templates` (one per text of the request's q, in order):
// the target prefix it must start with. A text's prefix goes to its first sentence; a sentence
// without one (every sentence when the request has no prefix field) gets nullopt: the
// server's own prefix.
std::vector<std::optional<std::string>> sentence_prefixes(const NativeRequest& request,
                                                          const std::vector<TextTemplate>& templates);

// The fields of a body: a JSON object as it is, or form fields (application/x-www-form-urlencoded:
// every value a string, the last of a repeated name kept). Throws HttpError 400 for a body that
// is neither, invalid JSON, JSON that is not an object or nests too deep, or text that is not
// UTF-8.
nlohmann::json body_fields(std::string_view body, std::string_view content_type);
// application/x-www-form-urlencoded -> {"name": "value", ...}; '+' is a space, %XX a byte.
nlohmann::json form_fields(std::string_view body);
// Whether `content_type`'s media type (before any ';' parameters) is `type` (lower case), in any case.
bool media_type_is(std::string_view content_type, std::string_view type);

// LibreTranslate's checks, with its messages: q, source and target present ("Invalid request:
// missing q parameter"), q a string or an array of strings, format "text" or "html",
// alternatives a whole number >= 0 (a string of digits from a form).
TranslateRequest parse_translate_request(const nlohmann::json& fields);
// The same for q, and each alignment field's type and range; whether the model has the layer
// and head asked for is the server's check (it knows the model). The alignment fields a request
// leaves out are `alignment_defaults`' (the run's own extraction, decode/alignment_choice.h).
NativeRequest parse_native_request(const nlohmann::json& fields,
                                   const decode::AlignmentExtraction& alignment_defaults = {});
DetectRequest parse_detect_request(const nlohmann::json& fields);

// Per-request limits (attn-serve --char-limit, --max-sentences; 0 = none). Characters are
// Unicode code points of all texts together, as LibreTranslate's char_limit counts them.
struct RequestLimits {
  int64_t char_limit = 0;
  int64_t max_sentences = 0;
};
void check_text_size(const std::vector<std::string>& q, const RequestLimits& limits);
void check_sentence_count(int64_t sentences, const RequestLimits& limits);

// Whether `text` is valid UTF-8 (nlohmann's serializer is the check).
bool is_valid_utf8(std::string_view text);

}  // namespace attn::serve
