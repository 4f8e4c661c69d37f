#pragma once
// Batcher: token-based, length-bucketed training batches, endless across epochs, resumable.
//
// Each epoch (numbered from 1):
//  1. order the examples by L = max(|src|, |tgt|), ties broken by a random key drawn from
//     (seed, epoch), so sentences of equal length regroup from epoch to epoch;
//  2. cut that order into batches, closing a batch before the sentence that would make its
//     padded size B * pad(max L) exceed batch_tokens (a sentence too long for any batch gets
//     one of its own). pad(max L) = max(S, T) of the resulting Batch;
//  3. shuffle the batch order (Fisher-Yates, Rng seeded from (seed, epoch)).
// Everything is a function of (seed, epoch), so a batcher set to a position yields exactly the
// batches an uninterrupted one would. With shuffle = false, ties keep input order and batches
// stay sorted by length (useful for validation). Batches are cut alike in every epoch, so
// batches_per_epoch is a constant.
#include <cstdint>
#include <vector>

#include "data/batch.h"
#include "data/corpus.h"
#include "io/config.h"

namespace attn::data {

struct BatcherOptions {
  // train.batch_tokens, pad_multiple and seed's declared defaults (io/config.h).
  int64_t batch_tokens = io::defaults<io::TrainConfig>().batch_tokens;  // bound on B * max(S, T), padding included
  int pad_multiple = io::defaults<io::TrainConfig>().pad_multiple;
  uint64_t seed = uint64_t(io::defaults<io::TrainConfig>().seed);
  bool shuffle = true;
};

// The batches of one round (an epoch here; a window of the training stream) of examples whose
// L = max(|src|, |tgt|) are `lengths`, as positions in that list: steps 1-3 above with the random
// draws of (options.seed, round).
std::vector<std::vector<int64_t>> plan_batches(const std::vector<int32_t>& lengths, const BatcherOptions& options,
                                               int64_t round);

struct BatcherPosition {
  int64_t epoch = 1;           // from 1
  int64_t batch_in_epoch = 0;  // batches of this epoch already yielded, 0 .. batches_per_epoch
};

class Batcher {
 public:
  Batcher(std::vector<Example> examples, BatcherOptions options);

  // The next batch; after an epoch's last batch, the next epoch begins.
  Batch next();

  int64_t epoch() const { return position_.epoch; }
  int64_t batches_per_epoch() const { return static_cast<int64_t>(plan_.size()); }
  BatcherPosition position() const { return position_; }
  void set_position(BatcherPosition position);

  const std::vector<Example>& examples() const { return examples_; }

 private:
  void plan_epoch(int64_t epoch);

  std::vector<Example> examples_;
  BatcherOptions options_;
  BatcherPosition position_;
  std::vector<std::vector<int64_t>> plan_;  // this epoch's batches, as positions in examples_
};

}  // namespace attn::data
