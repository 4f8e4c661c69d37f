#pragma once
// The explorer's AttentionBackend for a loaded model: decode::AttentionDumper (the code of
// attn-dump-attention, so a pair's weights are its CSV's), the links of the run's own alignment
// extraction, and AttentionJson. Runs on the decoding thread only (explorer_api.h).
#include <optional>

#include "decode/alignment_extraction.h"
#include "decode/translator.h"
#include "serve/explorer_api.h"

namespace attn::serve {

class ModelAttention : public AttentionBackend {
 public:
  // `alignment` unset: the model offers no links. `name`: the run as answers call it (public_run_name).
  ModelAttention(const models::Seq2SeqModel& model, const data::Vocab& source_vocab, const data::Vocab& target_vocab,
                 decode::TranslateOptions options, std::optional<decode::AlignmentExtraction> alignment,
                 std::string name);
  nlohmann::json attention(const AttentionQuery& query) override;

 private:
  const models::Seq2SeqModel& model_;
  const data::Vocab& source_vocab_;
  const data::Vocab& target_vocab_;
  decode::TranslateOptions options_;
  std::optional<decode::AlignmentExtraction> alignment_;
  std::string name_;
};

}  // namespace attn::serve
