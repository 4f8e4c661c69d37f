#include "decode/logits_processor.h"

#include <algorithm>
#include <cmath>

#include "core/check.h"

namespace attn::decode {

MinLengthProcessor::MinLengthProcessor(int64_t min_length, int32_t eos_id) : min_length_(min_length), eos_id_(eos_id) {
  ATTN_CHECK(min_length >= 0, "min_length must be >= 0, got ", min_length);
}

void MinLengthProcessor::process(float*, int64_t width, const std::vector<int32_t>& tokens,
                                 std::vector<int32_t>& forbidden) const {
  if (int64_t(tokens.size()) < min_length_ && eos_id_ >= 0 && eos_id_ < width) forbidden.push_back(eos_id_);
}

NoRepeatNgramProcessor::NoRepeatNgramProcessor(int n) : n_(n) {
  ATTN_CHECK(n >= 1, "no_repeat_ngram must be >= 1, got ", n);
}

void NoRepeatNgramProcessor::process(float*, int64_t width, const std::vector<int32_t>& tokens,
                                     std::vector<int32_t>& forbidden) const {
  // The next token would end the n-gram whose first n - 1 tokens are the hypothesis' last
  // n - 1: every earlier n-gram with that prefix forbids its last token.
  const size_t length = tokens.size(), prefix = size_t(n_ - 1);
  if (length < prefix + 1) return;
  const auto suffix = tokens.end() - std::ptrdiff_t(prefix);
  for (size_t start = 0; start + prefix < length; ++start) {
    const auto gram = tokens.begin() + std::ptrdiff_t(start);
    if (!std::equal(gram, gram + std::ptrdiff_t(prefix), suffix)) continue;
    const int32_t token = gram[std::ptrdiff_t(prefix)];
    if (token >= 0 && token < width) forbidden.push_back(token);
  }
}

RepetitionPenaltyProcessor::RepetitionPenaltyProcessor(float penalty) : penalty_(penalty) {
  ATTN_CHECK(std::isfinite(penalty) && penalty > 0.f, "repetition_penalty must be > 0 (1 = off), got ", penalty);
}

void RepetitionPenaltyProcessor::process(float* logits, int64_t width, const std::vector<int32_t>& tokens,
                                         std::vector<int32_t>&) const {
  std::vector<int32_t> used(tokens);  // each token once: a logit is penalised once however often it occurs
  std::sort(used.begin(), used.end());
  used.erase(std::unique(used.begin(), used.end()), used.end());
  for (const int32_t token : used) {
    if (token < 0 || token >= width) continue;
    float& logit = logits[token];
    logit = logit > 0.f ? logit / penalty_ : logit * penalty_;
  }
}

LogitsProcessors::LogitsProcessors(const SearchOptions& options) {
  // The penalty first: the processors that forbid read no logit, so the order only matters to
  // a processor yet to come that does.
  if (options.repetition_penalty != 1.f)
    processors_.push_back(std::make_unique<const RepetitionPenaltyProcessor>(options.repetition_penalty));
  if (options.min_length > 0)
    processors_.push_back(std::make_unique<const MinLengthProcessor>(options.min_length, options.eos_id));
  if (options.no_repeat_ngram > 0)
    processors_.push_back(std::make_unique<const NoRepeatNgramProcessor>(options.no_repeat_ngram));
}

void LogitsProcessors::start_step(int64_t rows) {
  if (int64_t(forbidden_.size()) < rows) forbidden_.resize(size_t(rows));
  for (int64_t r = 0; r < rows; ++r) forbidden_[size_t(r)].clear();
}

void LogitsProcessors::process(int64_t r, float* logits, int64_t width, const std::vector<int32_t>& tokens) {
  std::vector<int32_t>& forbidden = forbidden_[size_t(r)];
  for (const auto& processor : processors_) processor->process(logits, width, tokens, forbidden);
}

void LogitsProcessors::forbid(int64_t r, float* row) const {
  for (const int32_t token : forbidden_[size_t(r)]) row[token] = kForbiddenLogProb;
}

}  // namespace attn::decode
