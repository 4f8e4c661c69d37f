#include "serve/explorer_page.h"

#include "core/check.h"
#include "decode/alignment.h"
#include "serve/explorer_assets.h"

namespace attn::serve {

namespace {

// `text` with the first `marker` replaced by `with` (a marker missing is a broken asset).
std::string replaced(std::string text, const std::string& marker, const std::string& with) {
  const size_t at = text.find(marker);
  ATTN_CHECK(at != std::string::npos, "the explorer page has no ", marker);
  return text.replace(at, marker.size(), with);
}

// The markers from the last to the first: each is found before anything inserted after it, so
// a sentence of the data that holds a marker's text stays as it is.
std::string page(const std::string& data_script) {
  std::string html = assets::kExplorerHtml;
  html = replaced(html, "/*attn:script*/", assets::kExplorerJs);
  html = replaced(html, "<!--attn:data-->", data_script);
  return replaced(html, "/*attn:style*/", assets::kExplorerCss);
}

}  // namespace

std::string explorer_page() { return page(""); }

// JSON inside <script>: "</" could end the element and "<!--" open a comment, so '<' is
// written as \u003c, which JSON reads as the same character.
std::string explorer_page(const nlohmann::json& data) {
  const std::string text = data.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
  std::string escaped;
  escaped.reserve(text.size());
  for (char c : text) {
    if (c == '<')
      escaped += "\\u003c";
    else
      escaped += c;
  }
  return page("<script type=\"application/json\" id=\"attn-data\">" + escaped + "</script>");
}

AttentionHtmlWriter::AttentionHtmlWriter(std::ostream& out, const data::Vocab& source_vocab,
                                         const data::Vocab& target_vocab, const std::vector<std::string>& sources,
                                         const std::vector<std::string>& targets, AttentionFilter filter,
                                         std::optional<decode::AlignmentExtraction> alignment, std::string model)
    : out_(out),
      source_vocab_(source_vocab),
      target_vocab_(target_vocab),
      sources_(sources),
      targets_(targets),
      alignment_(alignment),
      model_(std::move(model)),
      json_(source_vocab, target_vocab, std::move(filter)) {}

void AttentionHtmlWriter::write(const decode::SentenceAttention& sentence) {
  if (sentence.maps.empty()) return;  // an empty line: nothing to show
  const align::Links links =
      alignment_ ? decode::alignment_links(sentence, *alignment_, source_vocab_, target_vocab_) : align::Links{};
  const size_t line = size_t(sentence.index);
  json_.add(sentence, sources_.at(line),
            targets_.empty() ? std::nullopt : std::optional<std::string>(targets_.at(line)), links);
}

void AttentionHtmlWriter::finish() {
  out_ << explorer_page(json_.document(model_, !targets_.empty(), alignment_));
  out_.flush();
}

}  // namespace attn::serve
