// libFuzzer target: attn-serve's request path before the model, bytes -> body fields (JSON or
// form; and the bytes as a multipart form) -> a LibreTranslate or attn request -> limits -> text
// templates (plain or HTML) -> rendering, as lib/serve/http_server.cpp runs it.
//
// The first input byte picks the body's content type and the request kind (translate,
// /v1/translate with its alignment fields, detect); the rest is the body. A bad body may only raise HttpError (status
// 400); anything else, or a broken template invariant, aborts: pieces around every sentence, no byte of the text lost.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>

#include "serve/multipart_form.h"
#include "serve/text_template.h"
#include "serve/translate_request.h"

namespace {

void require(bool condition) {
  if (!condition) std::abort();
}

void check_template(const attn::serve::TextTemplate& t, const std::string& text) {
  require(t.pieces.size() == t.sentences.size() + 1);
  for (const std::string& sentence : t.sentences) require(!sentence.empty());
  const std::string rendered = attn::serve::render(t, t.sentences);
  // Plain text comes back byte for byte. HTML comes back as the same markup and sentences:
  // rendering escapes what decoding read, and reading the rendering again is stable.
  if (!t.html) return require(rendered == text);
  const attn::serve::TextTemplate again = attn::serve::html_template(rendered);
  require(again.sentences == t.sentences);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  const uint8_t mode = data[0];
  const std::string body(reinterpret_cast<const char*>(data) + 1, size - 1);
  static const char* const types[] = {"application/json", "application/x-www-form-urlencoded", "", "text/html"};
  try {
    const nlohmann::json fields = attn::serve::body_fields(body, types[mode % 4]);
    const attn::serve::RequestLimits limits{5000, 100};
    if (mode & 8) {
      const attn::serve::DetectRequest request = attn::serve::parse_detect_request(fields);
      require(!request.q.empty());
    } else if (mode & 4) {
      const attn::serve::NativeRequest request = attn::serve::parse_native_request(fields);
      require(request.nbest >= 1 && !request.q.empty());
      if (request.alignments) {
        const attn::decode::AlignmentExtraction& a = *request.alignments;
        require(a.threshold >= 0 && a.threshold <= 1 && (!a.head || *a.head >= 0));
      }
      attn::serve::check_text_size(request.q, limits);
    } else {
      const attn::serve::TranslateRequest request = attn::serve::parse_translate_request(fields);
      require(!request.q.empty() && request.alternatives >= 0);
      attn::serve::check_text_size(request.q, limits);
      for (const std::string& text : request.q) {
        const bool html = request.format == attn::serve::TextFormat::html;
        check_template(html ? attn::serve::html_template(text) : attn::serve::plain_text_template(text), text);
      }
    }
  } catch (const attn::serve::HttpError& error) {
    require(error.status() == 400);
  }
  // The raw bytes as a multipart form (boundary "b") and as a Content-Type: its parts, or a 400.
  try {
    for (const auto& [name, content] : attn::serve::parse_multipart_form(body, "b"))
      require(name.size() + content.size() < body.size());
    require(!attn::serve::multipart_boundary(body).empty());
  } catch (const attn::serve::HttpError& error) {
    require(error.status() == 400);
  }
  // The raw bytes as a text of each format, valid UTF-8 or not.
  check_template(attn::serve::plain_text_template(body), body);
  check_template(attn::serve::html_template(body), body);
  return 0;
}
