#pragma once
// The attention explorer's data: sentence pairs with their tokens, attention maps and alignment
// links as JSON, the one format of POST /v1/attention's answer and of the data that
// attn-dump-attention --html embeds in its page (explorer_page.h), which the page's script reads.
//
//   {"model": "runs/en-it", "mode": "forced" | "translated",
//    "alignment": {"unit": "words" | "pieces", "extraction": "layer -1, mean, ..."} | null,
//    "sentences": [{"index": 0, "source": "...", "target": "...",
//       "source_tokens": ["▁Hel", "lo", "</s>"], "target_tokens": [y1 .. "</s>"],
//       "decoder_input_tokens": ["<s>", y1 ..],
//       "source_words": [0, 0, -1], "target_words": [...], "decoder_input_words": [...],
//       "links": [[source, target], ...],          // in alignment.unit, as attn-dump-attention --alignments
//       "maps": [{"kind": "cross", "layer": 0, "head": 1, "queries": n, "keys": m,
//                 "weights": "0.25 0.75 ..."}]}]}  // row-major, each weight as the CSV writes it
//
// Tokens label queries and keys as decode/attention_dump.h says (cross: queries target_tokens,
// keys source_tokens; dec_self: keys decoder_input_tokens); *_words give each token's word
// (decode::token_words: -1 for eos and bos). Weights are one string per map, as the CSV's text
// (decode::append_weight), so the page shows and downloads the CSV's exact numbers.
#include <cstdint>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "align/links.h"
#include "data/vocab.h"
#include "decode/alignment_extraction.h"
#include "decode/attention_dump.h"

namespace attn::serve {

// Which maps a sentence keeps; an empty set keeps all of its kind (kinds, layers or heads).
struct AttentionFilter {
  std::set<layers::AttentionKind> kinds;
  std::set<int> layers, heads;
  bool keeps(const decode::SentenceMap& map) const;
};

// The kinds, layers and heads `maps` (all of one sentence) hold; throws HttpError 400 naming
// the first of `filter`'s that is not among them, and what there is.
void check_filter(const std::vector<decode::SentenceMap>& maps, const AttentionFilter& filter);

// Builds the data, a sentence at a time. max_bytes (0: none) bounds the weights' text; past it
// add() throws HttpError 413 naming the bound and `bound_name` (the flag that sets it).
class AttentionJson {
 public:
  AttentionJson(const data::Vocab& source, const data::Vocab& target, AttentionFilter filter, int64_t max_bytes = 0,
                std::string bound_name = "");
  // One sentence: its maps that the filter keeps, its texts (the target decoded from its
  // tokens when not given) and its links.
  void add(const decode::SentenceAttention& sentence, const std::string& source_text,
           const std::optional<std::string>& target_text, const align::Links& links);
  // The whole document; `alignment` unset: the model offers no links.
  nlohmann::json document(const std::string& model, bool forced,
                          const std::optional<decode::AlignmentExtraction>& alignment) const;

 private:
  nlohmann::json map_json(const decode::SentenceMap& map, size_t head);

  const data::Vocab& source_;
  const data::Vocab& target_;
  AttentionFilter filter_;
  int64_t max_bytes_, bytes_ = 0;
  std::string bound_name_;
  nlohmann::json sentences_ = nlohmann::json::array();
};

}  // namespace attn::serve
