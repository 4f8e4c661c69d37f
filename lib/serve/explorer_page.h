#pragma once
// The attention explorer's page: one HTML document with its CSS and script inlined
// (assets/explorer.{html,css,js}, compiled in: explorer_assets.h). attn-serve serves it at /,
// where it asks the server; with data embedded (attention_json.h's document) it is
// attn-dump-attention --html's file, which opens from file:// with no server. One page, one
// script, two sources of data.
#include <optional>
#include <ostream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "decode/alignment_extraction.h"
#include "decode/attention_writer.h"
#include "serve/attention_json.h"

namespace attn::serve {

// The page served at /.
std::string explorer_page();
// The page with `data` embedded: it shows that and asks no server.
std::string explorer_page(const nlohmann::json& data);

// attn-dump-attention --html: the sentences' maps (those `filter` keeps) and links (under
// `alignment`, when set; the dump must then hold every cross map) as one page, written by finish().
class AttentionHtmlWriter final : public decode::AttentionWriter {
 public:
  AttentionHtmlWriter(std::ostream& out, const data::Vocab& source_vocab, const data::Vocab& target_vocab,
                      const std::vector<std::string>& sources, const std::vector<std::string>& targets,
                      AttentionFilter filter, std::optional<decode::AlignmentExtraction> alignment, std::string model);
  void write(const decode::SentenceAttention& sentence) override;
  void finish() override;

 private:
  std::ostream& out_;
  const data::Vocab& source_vocab_;
  const data::Vocab& target_vocab_;
  const std::vector<std::string>& sources_;
  const std::vector<std::string>& targets_;  // empty: free mode
  std::optional<decode::AlignmentExtraction> alignment_;
  std::string model_;
  AttentionJson json_;
};

}  // namespace attn::serve
