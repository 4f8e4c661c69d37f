#pragma once
// The decoding hook: what shapes the next token of a hypothesis, applied by greedy search,
// sampling and beam search at one place each, to every live row of a step. The order is
//   model logits -> processors -> normalise (log-softmax; beam search: log-sum-exp) -> forbid -> choose
// A processor sees a row's logits before their normalisation and may change them (a repetition
// penalty): the hypothesis' score is then the log-probability of the processed row, as in
// CTranslate2 and Hugging Face. It may also forbid tokens: those become -infinity after the
// normalisation, so the tokens left keep the log-probabilities of the whole processed row (a
// forbidden token is a choice taken away, not probability handed to the others; with only
// forbidding processors a hypothesis' score is the model's own).
//
// A row whose every token is forbidden ends its hypothesis where it is, as the length limit
// does. The length limit (max_output_length) always wins over a processor: with min_length
// above it, the output is cut at the limit without eos. A forced step (SearchOptions::prefix)
// has no choice: its row is processed (its score is the processed row's) but nothing in it is
// forbidden.
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
  // logits: the next-token row (width), before its normalisation, of a hypothesis whose tokens
  // so far (without bos, with a forced prefix; beam search: the beam's history) are `tokens`;
  // tokens.size() is the output length so far, which is also the step. A processor may change
  // the logits and appends to `forbidden` the ids the choice must not take. Must be safe to call
  // from several threads at once.
  virtual void process(float* logits, int64_t width, const std::vector<int32_t>& tokens,
                       std::vector<int32_t>& forbidden) const = 0;
};

// Forbids eos until the output holds min_length tokens (eos not counted): fairseq's --min-len,
// CTranslate2's min_decoding_length.
class MinLengthProcessor : public LogitsProcessor {
 public:
  MinLengthProcessor(int64_t min_length, int32_t eos_id);
  void process(float* logits, int64_t width, const std::vector<int32_t>& tokens,
               std::vector<int32_t>& forbidden) const override;

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
  void process(float* logits, int64_t width, const std::vector<int32_t>& tokens,
               std::vector<int32_t>& forbidden) const override;

 private:
  int n_;
};

// CTRL's repetition penalty (Keskar et al. 2019), as CTranslate2's repetition_penalty and
// Hugging Face's RepetitionPenaltyLogitsProcessor define it: the logit of every token already
// in the hypothesis (each once, however often it occurs; a forced prefix counts) is divided by
// the penalty when positive and multiplied by it otherwise, so a penalty above 1 makes every
// used token less likely. An ensemble's "logits" are its members' mean log-probabilities
// (models/ensemble.h), all <= 0: there the penalty multiplies them.
class RepetitionPenaltyProcessor : public LogitsProcessor {
 public:
  explicit RepetitionPenaltyProcessor(float penalty);
  void process(float* logits, int64_t width, const std::vector<int32_t>& tokens,
               std::vector<int32_t>& forbidden) const override;

 private:
  float penalty_;
};

// The processors a search applies, in order, built once from its options (empty when none is
// set: then a search never calls it), and what they forbid in each row of the current step.
// process() for row r before the step's normalisation, forbid() for row r after it; different
// rows may be processed and forbidden from different threads at once.
class LogitsProcessors {
 public:
  explicit LogitsProcessors(const SearchOptions& options);
  bool empty() const { return processors_.empty(); }
  // A new step of `rows` rows: nothing forbidden yet.
  void start_step(int64_t rows);
  // Row r (< the step's rows): every processor on its logits, remembering what they forbid.
  void process(int64_t r, float* logits, int64_t width, const std::vector<int32_t>& tokens);
  // Row r once normalised (log-probabilities, or beam search's logits after their log-sum-exp):
  // what process() forbade in it becomes kForbiddenLogProb.
  void forbid(int64_t r, float* row) const;

 private:
  std::vector<std::unique_ptr<const LogitsProcessor>> processors_;
  std::vector<std::vector<int32_t>> forbidden_;  // per row of the step
};

}  // namespace attn::decode
