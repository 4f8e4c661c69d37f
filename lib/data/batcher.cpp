#include "data/batcher.h"

#include <algorithm>
#include <numeric>

#include "core/check.h"
#include "core/rng.h"

namespace attn::data {

namespace {

// Independent per-epoch streams: `purpose` 0 draws tie-break keys, 1 shuffles batches.
uint64_t epoch_seed(uint64_t seed, int64_t epoch, uint64_t purpose) {
  return mix64(seed, 2 * static_cast<uint64_t>(epoch) + purpose);
}

// Positions of the examples sorted by length; equal lengths by a random key, or by position
// when random_ties is false (shuffle off).
std::vector<int64_t> length_order(const std::vector<int32_t>& lengths, bool random_ties, uint64_t tie_seed) {
  struct Key {
    int64_t length;
    uint64_t tie;
    int64_t position;
  };
  const auto n = static_cast<int64_t>(lengths.size());
  std::vector<Key> keys(n);
  // Serial: the training stream plans its next window on its read-ahead thread, where an OpenMP
  // region would take a core from the trainer and add a second team (libgomp then cuts the
  // spin of every idle worker, the trainer's included). The sort below dominates anyway.
  for (int64_t i = 0; i < n; ++i) keys[i] = {lengths[i], random_ties ? mix64(tie_seed, i) : 0, i};
  std::sort(keys.begin(), keys.end(), [](const Key& a, const Key& b) {
    return a.length != b.length ? a.length < b.length : a.tie != b.tie ? a.tie < b.tie : a.position < b.position;
  });
  std::vector<int64_t> order(n);
  for (int64_t i = 0; i < n; ++i) order[i] = keys[i].position;
  return order;
}

// Cuts a length-ascending order into batches whose padded size B * pad(max L) stays within
// batch_tokens; a batch always takes at least one sentence.
std::vector<std::vector<int64_t>> cut_batches(const std::vector<int64_t>& order, const std::vector<int32_t>& lengths,
                                              const BatcherOptions& options) {
  std::vector<std::vector<int64_t>> batches;
  std::vector<int64_t> current;
  int64_t width = 0;  // pad(max L) of `current`
  for (int64_t position : order) {
    const int64_t own = pad_length(lengths[position], options.pad_multiple);
    if (!current.empty() && static_cast<int64_t>(current.size() + 1) * std::max(width, own) > options.batch_tokens) {
      batches.push_back(std::move(current));
      current.clear();
      width = 0;
    }
    width = std::max(width, own);
    current.push_back(position);
  }
  if (!current.empty()) batches.push_back(std::move(current));
  return batches;
}

}  // namespace

std::vector<std::vector<int64_t>> plan_batches(const std::vector<int32_t>& lengths, const BatcherOptions& options,
                                               int64_t round) {
  auto order = length_order(lengths, options.shuffle, epoch_seed(options.seed, round, 0));
  auto plan = cut_batches(order, lengths, options);
  if (options.shuffle) {
    Rng rng(epoch_seed(options.seed, round, 1));
    for (auto i = static_cast<int64_t>(plan.size()) - 1; i > 0; --i)
      std::swap(plan[i], plan[rng.below(static_cast<uint64_t>(i) + 1)]);
  }
  return plan;
}

Batcher::Batcher(std::vector<Example> examples, BatcherOptions options)
    : examples_(std::move(examples)), options_(options) {
  ATTN_CHECK(!examples_.empty(), "Batcher: no examples");
  ATTN_CHECK(options_.batch_tokens > 0, "Batcher: batch_tokens ", options_.batch_tokens, " must be positive");
  ATTN_CHECK(options_.pad_multiple >= 1, "Batcher: pad_multiple ", options_.pad_multiple, " must be at least 1");
  plan_epoch(1);
}

void Batcher::plan_epoch(int64_t epoch) {
  std::vector<int32_t> lengths;
  lengths.reserve(examples_.size());
  for (const Example& example : examples_)
    lengths.push_back(static_cast<int32_t>(std::max(example.src.size(), example.tgt.size())));
  plan_ = plan_batches(lengths, options_, epoch);
  position_ = {epoch, 0};
}

Batch Batcher::next() {
  if (position_.batch_in_epoch == batches_per_epoch()) plan_epoch(position_.epoch + 1);
  const auto& positions = plan_[position_.batch_in_epoch++];
  std::vector<const Example*> rows;
  rows.reserve(positions.size());
  for (int64_t position : positions) rows.push_back(&examples_[position]);
  return make_batch(rows, options_.pad_multiple);
}

void Batcher::set_position(BatcherPosition position) {
  ATTN_CHECK(position.epoch >= 1, "Batcher: epoch ", position.epoch, " must be at least 1");
  ATTN_CHECK(position.batch_in_epoch >= 0 && position.batch_in_epoch <= batches_per_epoch(), "Batcher: batch ",
             position.batch_in_epoch, " outside an epoch of ", batches_per_epoch(), " batches");
  if (position.epoch != position_.epoch) plan_epoch(position.epoch);
  position_ = position;
}

}  // namespace attn::data
