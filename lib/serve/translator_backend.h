#pragma once
// The SentenceQueue's backend for a loaded model: decode::encode_lines to encode (the model's
// length limit and its warning as attn-translate has them) and decode::Translator to decode, so
// a sentence gets the translation attn-translate gives it with the same settings, and its
// links those of attn-translate --alignments (decode::nbest_alignments).
#include <memory>

#include "decode/translator.h"
#include "serve/sentence_queue.h"

namespace attn::serve {

class TranslatorBackend : public BatchBackend {
 public:
  // `threads`: the threads decoding uses (core/parallel.h; 0 = one per core).
  TranslatorBackend(const models::Seq2SeqModel& model, const data::Vocab& source_vocab, const data::Vocab& target_vocab,
                    decode::TranslateOptions options, int threads);
  void start_thread() override;
  std::vector<std::vector<int32_t>> encode(const std::vector<std::string>& texts) override;
  // A sentence without a prefix of its own starts with the options' prefix (decode.prefix).
  std::vector<SentenceResult> decode(const std::vector<const std::vector<int32_t>*>& sentences, int nbest,
                                     const std::vector<std::optional<decode::AlignmentExtraction>>& alignments,
                                     const std::vector<std::optional<std::string>>& prefixes) override;
  const decode::TranslateOptions& options() const { return options_; }

 private:
  const models::Seq2SeqModel& model_;
  const data::Vocab& source_vocab_;
  const data::Vocab& target_vocab_;
  decode::TranslateOptions options_;
  int threads_;
};

}  // namespace attn::serve
