#include "decode/logits_processor.h"

#include <algorithm>

#include "core/check.h"

namespace attn::decode {

MinLengthProcessor::MinLengthProcessor(int64_t min_length, int32_t eos_id) : min_length_(min_length), eos_id_(eos_id) {
  ATTN_CHECK(min_length >= 0, "min_length must be >= 0, got ", min_length);
}

void MinLengthProcessor::forbid(float* log_probs, int64_t width, const std::vector<int32_t>& tokens) const {
  if (int64_t(tokens.size()) < min_length_ && eos_id_ >= 0 && eos_id_ < width) log_probs[eos_id_] = kForbiddenLogProb;
}

NoRepeatNgramProcessor::NoRepeatNgramProcessor(int n) : n_(n) {
  ATTN_CHECK(n >= 1, "no_repeat_ngram must be >= 1, got ", n);
}

void NoRepeatNgramProcessor::forbid(float* log_probs, int64_t width, const std::vector<int32_t>& tokens) const {
  // The next token would end the n-gram whose first n - 1 tokens are the hypothesis' last
  // n - 1: every earlier n-gram with that prefix forbids its last token.
  const size_t length = tokens.size(), prefix = size_t(n_ - 1);
  if (length < prefix + 1) return;
  const auto suffix = tokens.end() - std::ptrdiff_t(prefix);
  for (size_t start = 0; start + prefix < length; ++start) {
    const auto gram = tokens.begin() + std::ptrdiff_t(start);
    if (!std::equal(gram, gram + std::ptrdiff_t(prefix), suffix)) continue;
    const int32_t token = gram[std::ptrdiff_t(prefix)];
    if (token >= 0 && token < width) log_probs[token] = kForbiddenLogProb;
  }
}

LogitsProcessors::LogitsProcessors(const SearchOptions& options) {
  if (options.min_length > 0)
    processors_.push_back(std::make_unique<const MinLengthProcessor>(options.min_length, options.eos_id));
  if (options.no_repeat_ngram > 0)
    processors_.push_back(std::make_unique<const NoRepeatNgramProcessor>(options.no_repeat_ngram));
}

}  // namespace attn::decode
