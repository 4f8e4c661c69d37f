#pragma once
// KvCache: the keys and values an attention layer has already computed during incremental
// decoding, so step t attends over steps 0..t without recomputing the prefix. For
// self-attention it grows by one step per call; for cross-attention it holds the projected
// encoder output, computed once per sentence. Beam search reorders its rows.
//
// The cache lives in (B, H, capacity, Dh) storages with room for more steps: an append with
// room writes the step in place, and only a reorder or a full storage copies the cache. A
// reorder waits for the next append, which gathers the kept rows and adds the new step in one
// pass (defer_select_rows), so beam search copies each self-attention cache once a step, and
// greedy search once every few steps (ops::attention_step reads the storages as they are).
//
// The copies go back and forth between two storages per tensor (StoragePair), so a copy
// allocates nothing. A new tensor per step was a new pool block every few steps (each longer
// cache its own size class), mapped and faulted in afresh, and its arrival evicted the blocks
// the rest of the step reuses: most of beam search's system time (docs/performance.md, "where a
// beam step goes").
//
// Shapes: storages (B, H, capacity, Dh), the first steps() time positions the cache; a step
// (B, H, 1, Dh).
#include <optional>
#include <utility>
#include <vector>

#include "core/tensor.h"
#include "ops/attention.h"

namespace attn::layers {

// Two storages written in turn: a tensor copied from one goes into the other.
class StoragePair {
 public:
  // A (B, H, capacity, Dh) view of the storage not written last, with capacity >= `steps`: all
  // the room that storage has. It is replaced by a new one with room for `reserve_steps` when
  // it has less than `steps` or something besides this pair still holds it.
  Tensor next(const Shape& planes_and_width, int64_t steps, int64_t reserve_steps, DType dtype);

 private:
  BufferPtr storage_[2];
  int next_ = 0;
};

class KvCache {
 public:
  KvCache() = default;
  // A full cache: cross-attention's projected memory, keys and values (B, H, S, Dh).
  KvCache(Tensor keys, Tensor values);
  // One owner: an append writes in place into storage no other handle reads.
  KvCache(KvCache&&) = default;
  KvCache& operator=(KvCache&&) = default;
  KvCache(const KvCache&) = delete;
  KvCache& operator=(const KvCache&) = delete;

  bool empty() const { return steps_ == 0; }
  int64_t steps() const { return steps_; }
  // The storages and how many steps they hold, as ops::attention_step reads them.
  ops::KeyValues entries() const { return {keys_, values_, steps_}; }
  // The cache as contiguous (B, H, steps, Dh) tensors: the storages themselves when full (the
  // memory), else copies.
  Tensor keys() const;
  Tensor values() const;

  // Appends one decoding step's keys and values (B', H, 1, Dh), f32, along the time axis, after
  // the reorder defer_select_rows left (B' rows).
  void append(const Tensor& step_keys, const Tensor& step_values);
  // Keeps rows `rows` (with repeats) of the batch axis: beam search's reorder.
  void select_rows(const std::vector<int64_t>& rows);
  // The same reorder, done by the next append: keys and values keep their old rows until then,
  // so a cache that is read only after an append (self-attention) reorders this way.
  void defer_select_rows(const std::vector<int64_t>& rows);

 private:
  Tensor keys_, values_;  // (B, H, capacity, Dh)
  int64_t steps_ = 0;
  std::optional<std::vector<int64_t>> pending_rows_;  // the reorder the next append does
  StoragePair key_storage_, value_storage_;
};

}  // namespace attn::layers
