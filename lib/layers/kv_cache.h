#pragma once
// KvCache: the keys and values an attention layer has already computed during incremental
// decoding, so step t attends over steps 0..t without recomputing the prefix. For
// self-attention it grows by one step per call; for cross-attention it holds the projected
// encoder output, computed once per sentence. Beam search reorders its rows.
//
// The cache lives in (B, H, capacity, Dh) storages with room for more steps: an append with
// room writes the step in place, and only a reorder or a full storage copies the cache. A
// reorder (select_rows) copies nothing at once: it records which stored row each row of the
// cache reads (a row map, which ops::attention_step follows), and the next append gathers the
// kept rows and adds the new step in one pass. So beam search copies each self-attention cache
// once a step, greedy search once every few steps, and cross-attention's memory, which no step
// appends to, never: its B source rows serve every beam of their sentence.
//
// The copies go back and forth between two storages per tensor (StoragePair), so a copy
// allocates nothing. A new tensor per step was a new pool block every few steps (each longer
// cache its own size class), mapped and faulted in afresh, and its arrival evicted the blocks
// the rest of the step reuses, so beam search spent its time in page faults (docs/performance.md,
// "Decoding speed", "where a beam step goes").
//
// Shapes: storages (B, H, capacity, Dh), the first steps() time positions the cache; a step
// (R, H, 1, Dh), R the cache's rows (B, or the row map's length).
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
  // The storages, how many steps they hold and the row map, as ops::attention_step reads them.
  ops::KeyValues entries() const { return {keys_, values_, steps_, row_map_ ? &*row_map_ : nullptr}; }
  // The cache as contiguous (R, H, steps, Dh) tensors: the storages themselves when full and
  // not reordered (the memory), else copies.
  Tensor keys() const;
  Tensor values() const;

  // Appends one decoding step's keys and values (R, H, 1, Dh), f32, along the time axis: the
  // cache's rows after the last reorder.
  void append(const Tensor& step_keys, const Tensor& step_values);
  // Keeps rows `rows` (with repeats) of the cache's rows: beam search's reorder. Reorders
  // compose; the next append carries them out.
  void select_rows(const std::vector<int64_t>& rows);

 private:
  Tensor keys_, values_;  // (B, H, capacity, Dh)
  int64_t steps_ = 0;
  std::optional<std::vector<int64_t>> row_map_;  // the stored row each row reads; none = row i reads row i
  StoragePair key_storage_, value_storage_;
};

}  // namespace attn::layers
