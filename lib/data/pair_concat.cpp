#include "data/pair_concat.h"

#include <array>

#include "core/check.h"
#include "core/rng.h"

namespace attn::data {

namespace {

constexpr size_t kMaxPartners = 3;  // ConcatOptions::max_pairs is at most 4

// Appends `part`'s ids without its eos, and its links shifted past the text already there.
void append_pair(Example& combined, const Example& part) {
  const auto source_shift = int32_t(combined.src.size()), target_shift = int32_t(combined.tgt.size());
  for (const PieceLink& link : part.links)
    combined.links.emplace_back(link.first + source_shift, link.second + target_shift);
  combined.src.insert(combined.src.end(), part.src.begin(), part.src.end() - 1);
  combined.tgt.insert(combined.tgt.end(), part.tgt.begin(), part.tgt.end() - 1);
}

}  // namespace

PackedExamples concatenate_pairs(const PackedExamples& examples, const ConcatOptions& options, int max_len,
                                 uint64_t seed, int64_t& joined) {
  PackedExamples out;
  joined = 0;
  const size_t n = examples.size();
  ATTN_CHECK(options.max_pairs >= 2 && size_t(options.max_pairs) <= kMaxPartners + 1, "concatenate_pairs: max_pairs ",
             options.max_pairs, " is outside [2, 4]");
  Rng draws(seed);
  for (size_t i = 0; i < n; ++i) {
    Example example = examples.unpack(i);
    // The draws are made whether or not a join fits, so that one pair's length does not shift
    // the draws of the pairs after it.
    const bool join = draws.uniform() < options.prob;
    const auto partners = static_cast<size_t>(1 + draws.below(uint64_t(options.max_pairs - 1)));
    std::array<size_t, kMaxPartners> others{};
    for (size_t p = 0; p < partners; ++p) others[p] = size_t(draws.below(n));
    if (join && n > 1) {
      Example combined;
      append_pair(combined, example);
      for (size_t p = 0; p < partners; ++p) append_pair(combined, examples.unpack(others[p]));
      // + 1: the eos.
      if (int64_t(combined.src.size()) + 1 <= max_len && int64_t(combined.tgt.size()) + 1 <= max_len) {
        combined.src.push_back(kEosId);
        combined.tgt.push_back(kEosId);
        combined.index = example.index;
        combined.corpus = example.corpus;
        example = std::move(combined);
        ++joined;
      }
    }
    out.add(example);
  }
  out.shrink_to_fit();
  return out;
}

}  // namespace attn::data
