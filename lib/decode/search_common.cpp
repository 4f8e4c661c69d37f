#include <algorithm>
#include <cmath>

#include "core/buffer_pool.h"
#include "core/check.h"
#include "decode/search.h"

namespace attn::decode {

void end_search_step() { BufferPool::instance().end_step(); }

int64_t max_output_length(int64_t source_length, const SearchOptions& options) {
  int64_t length = static_cast<int64_t>(options.max_len_ratio * float(source_length)) + options.max_len_extra;
  if (options.max_output_tokens > 0) length = std::min(length, options.max_output_tokens);
  return std::max<int64_t>(length, 1);
}

OutputPrefixes output_prefixes(const SearchOptions& options, const OutputPrefixes& prefixes, int64_t batch_size,
                               int64_t vocab_size) {
  ATTN_CHECK(prefixes.empty() || int64_t(prefixes.size()) == batch_size, "search: ", prefixes.size(), " prefixes for ",
             batch_size, " sentences");
  OutputPrefixes result = prefixes.empty() ? OutputPrefixes(size_t(batch_size), options.prefix) : prefixes;
  for (const std::vector<int32_t>& prefix : result)
    for (const int32_t token : prefix)
      ATTN_CHECK(token >= 0 && token < vocab_size && token != options.eos_id, "search: prefix token ", token,
                 " is not a target id other than eos (the vocabulary has ", vocab_size, ")");
  return result;
}

std::vector<std::vector<Hypothesis>> search(const models::Seq2SeqModel& model, const data::Batch& source,
                                            const SearchOptions& options, const std::vector<uint64_t>& streams,
                                            const OutputPrefixes& prefixes) {
  if (!options.sampling.enabled && options.beam > 1) return beam_search(model, source, options, prefixes);
  std::vector<Hypothesis> found = options.sampling.enabled ? sample_search(model, source, options, streams, prefixes)
                                                           : greedy_search(model, source, options, prefixes);
  std::vector<std::vector<Hypothesis>> nbest;
  nbest.reserve(found.size());
  for (Hypothesis& hypothesis : found) nbest.push_back({std::move(hypothesis)});
  return nbest;
}

float length_penalty(int64_t length, float alpha) {
  return alpha == 0.f ? 1.f : std::pow((5.f + float(length)) / 6.f, alpha);
}

}  // namespace attn::decode
