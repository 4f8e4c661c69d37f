#pragma once
// Batch: a padded block of sentence pairs, ready to become tensors.
//
// Shapes: B sentences, S source length, T target length (both padded up to a multiple of
// pad_multiple so that few distinct shapes reach the primitive cache). Row-major, pad = 0.
//
// Teacher forcing: for a target y1 .. yn (yn = eos) the decoder reads
//   tgt_in  = bos y1 .. y_{n-1}
// and is scored against
//   tgt_out = y1 .. yn
// so tgt_in is tgt_out shifted right by one, both n long.
#include <cstdint>
#include <vector>

#include "data/corpus.h"

namespace attn::data {

struct Batch {
  int64_t size = 0;                        // B
  int64_t src_len = 0, tgt_len = 0;        // S, T (padded)
  std::vector<int32_t> src;                // (B, S)
  std::vector<int32_t> src_lengths;        // (B) real lengths, eos included
  std::vector<int32_t> tgt_in;             // (B, T)
  std::vector<int32_t> tgt_out;            // (B, T)
  std::vector<int32_t> tgt_lengths;        // (B)
  std::vector<int64_t> indices;            // (B) Example::index of each row
  int64_t src_tokens = 0, tgt_tokens = 0;  // real (unpadded) token counts
  // (B) each row's piece links (Example::links): link (s, t) says the decoder position t, which
  // predicts tgt_out[t], attends to source position s. Empty rows without alignments.
  std::vector<PieceLinks> links;
};

// Target positions of the batch with at least one link: the rows guided alignment averages over.
int64_t linked_target_rows(const Batch& batch);

// Rounds `length` up to a multiple of `multiple`.
int64_t pad_length(int64_t length, int64_t multiple);

// One row per example, in the given order. At least one example; pad_multiple >= 1.
Batch make_batch(const std::vector<const Example*>& examples, int pad_multiple);

// Rank `rank`'s share of a batch for data-parallel training: a contiguous run of sentences,
// the first B % world ranks taking one more, so the shards in rank order concatenate to the
// batch. Shards keep the batch's S and T, so every rank runs the same shapes; a shard may be
// empty (size 0) when B < world, so weight gradients by tokens, not by rank.
Batch shard(const Batch& batch, int rank, int world);

}  // namespace attn::data
