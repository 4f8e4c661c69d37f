#pragma once
// Translator: raw text lines in, detokenized translations out, exactly one per input line and
// in input order (batches are length-sorted internally, then restored). An empty input line
// gives an empty output without running the model.
#include <string>
#include <vector>

#include "data/vocab.h"
#include "decode/search.h"
#include "models/seq2seq_model.h"

namespace attn::decode {

struct TranslateOptions {
  SearchOptions search;
  int batch_size = 32;
  int64_t max_source_tokens = 0;  // longer inputs are truncated (0 = no limit)
};

struct Translation {
  std::vector<Hypothesis> nbest;  // best first; empty for an empty input line
  std::string text;               // detokenized best hypothesis
};

class Translator {
 public:
  Translator(const models::Seq2SeqModel& model, const data::Vocab& source_vocab, const data::Vocab& target_vocab,
             TranslateOptions options);

  std::vector<Translation> translate(const std::vector<std::string>& lines) const;
  // The same for lines already encoded (encode_lines): an empty one gets no hypothesis.
  std::vector<Translation> translate_ids(const std::vector<std::vector<int32_t>>& encoded) const;
  // Detokenized text of a hypothesis.
  std::string detokenize(const Hypothesis& hypothesis) const;

 private:
  const models::Seq2SeqModel& model_;
  const data::Vocab& source_vocab_;
  const data::Vocab& target_vocab_;
  TranslateOptions options_;
};

// A source-only batch from encoded sentences (each ending in eos), padded to a multiple of 8.
data::Batch source_batch(const std::vector<const std::vector<int32_t>*>& sentences);

// Each line's ids with eos appended; an empty line gives no ids. A line of max_tokens or more
// tokens (eos included; 0 = no limit) keeps its first max_tokens - 1 and a warning names it as
// "<side> line N" (1-based).
std::vector<std::vector<int32_t>> encode_lines(const std::vector<std::string>& lines, const data::Vocab& vocab,
                                               int64_t max_tokens, const std::string& side = "input");

}  // namespace attn::decode
