#pragma once
// Concatenated training pairs (data.concat_prob): longer examples made from short ones, so that
// a model trained on short sentences also sees long inputs, without new data (as in
// document-level and robustness work).
//
// With probability prob an example becomes the join of itself and 1..max_pairs-1 partners drawn
// at random from the same set, source sides joined in that order and target sides in the same
// order. Each side keeps exactly one eos, at its end (the inner ones are dropped); each part's
// alignment links move with its text (shifted by the lengths of the parts before it), so they
// stay ordered by target. A join longer
// than max_len on either side is not made: the example stays single. The draws come from `seed`
// alone (one generator, in example order), so the result is the same for every thread count and
// again on resume.
#include <cstdint>

#include "data/packed_examples.h"
#include "io/config.h"

namespace attn::data {

struct ConcatOptions {
  double prob = io::defaults<io::DataConfig>().concat_prob;   // 0 = off
  int max_pairs = io::defaults<io::DataConfig>().concat_max;  // 2..4: pairs per joined example
  bool on() const { return prob > 0; }
};

// The examples, some of them joins as above, in the same order and number; `joined` counts the
// joins made. Example i keeps its index and corpus (those of its first pair).
PackedExamples concatenate_pairs(const PackedExamples& examples, const ConcatOptions& options, int max_len,
                                 uint64_t seed, int64_t& joined);

}  // namespace attn::data
