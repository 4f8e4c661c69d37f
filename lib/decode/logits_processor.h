#pragma once
// The decoding hook: constraints on the next token of a hypothesis, applied by greedy search,
// sampling and beam search at one place each, to every live row of a step after its
// log-softmax and before the choice (argmax, draw, best continuations). Beam search hands them
// the row's logits, after it has taken their log-sum-exp: a token set to -infinity is forbidden
// either way, and the others keep the log-probabilities of the whole row.
//
// A processor forbids tokens by setting their log-probabilities to -infinity; it never raises
// one, so the chosen token's log-probability (and a hypothesis' score) is the model's own.
// A row whose every token is forbidden ends its hypothesis where it is, as the length limit
// does. The length limit (max_output_length) always wins over a processor: with min_length
// above it, the output is cut at the limit without eos.
#include <cstdint>
#include <limits>
#include <memory>
#include <vector>

#include "decode/search.h"

namespace attn::decode {

// The log-probability of a forbidden token.
inline constexpr float kForbiddenLogProb = -std::numeric_limits<float>::infinity();

class LogitsProcessor {
 public:
  virtual ~LogitsProcessor() = default;
  // log_probs: the next-token row (width) of a hypothesis whose tokens so far (without bos;
  // beam search: the beam's history) are `tokens`; tokens.size() is the output length so far,
  // which is also the step. Must be safe to call from several threads at once.
  virtual void forbid(float* log_probs, int64_t width, const std::vector<int32_t>& tokens) const = 0;
};

// Forbids eos until the output holds min_length tokens (eos not counted): fairseq's --min-len,
// CTranslate2's min_decoding_length.
class MinLengthProcessor : public LogitsProcessor {
 public:
  MinLengthProcessor(int64_t min_length, int32_t eos_id);
  void forbid(float* log_probs, int64_t width, const std::vector<int32_t>& tokens) const override;

 private:
  int64_t min_length_;
  int32_t eos_id_;
};

// Forbids every token that would complete an n-gram of size n already in the hypothesis:
// fairseq's --no-repeat-ngram-size, CTranslate2's no_repeat_ngram_size. eos never occurs in a
// live hypothesis, so it is never forbidden here.
class NoRepeatNgramProcessor : public LogitsProcessor {
 public:
  explicit NoRepeatNgramProcessor(int n);
  void forbid(float* log_probs, int64_t width, const std::vector<int32_t>& tokens) const override;

 private:
  int n_;
};

// The processors a search applies, in order, built once from its options: empty when no
// constraint is set, and then apply() touches nothing.
class LogitsProcessors {
 public:
  explicit LogitsProcessors(const SearchOptions& options);
  bool empty() const { return processors_.empty(); }
  void apply(float* log_probs, int64_t width, const std::vector<int32_t>& tokens) const {
    for (const auto& processor : processors_) processor->forbid(log_probs, width, tokens);
  }

 private:
  std::vector<std::unique_ptr<const LogitsProcessor>> processors_;
};

}  // namespace attn::decode
