#pragma once
// KvCache: the keys and values an attention layer has already computed during incremental
// decoding, so step t attends over steps 0..t without recomputing the prefix. For
// self-attention it grows by one step per call; for cross-attention it holds the projected
// encoder output, computed once per sentence. Beam search reorders its rows.
//
// Each step copies a self-attention cache once: a reorder waits for the next append, which
// gathers the kept rows and adds the new step in one pass (defer_select_rows).
//
// The copies go back and forth between two storages per tensor (StoragePair), each with room
// for more steps, so a step allocates nothing. A new tensor per step was a new pool block every
// few steps (each longer cache its own size class), mapped and faulted in afresh, and its
// arrival evicted the blocks the rest of the step reuses: most of beam search's system time
// (docs/performance.md, "where a beam step goes").
//
// Shapes: keys, values (B, H, t, Dh); a step (B, H, 1, Dh).
#include <optional>
#include <utility>
#include <vector>

#include "core/tensor.h"

namespace attn::layers {

// Two storages written in turn: a tensor copied from one goes into the other.
class StoragePair {
 public:
  // A tensor of `shape` on the storage not written last, which is replaced by a new one of
  // `reserve_bytes` (at least the shape's) when it is smaller than the shape or something
  // besides this pair still holds it.
  Tensor next(const Shape& shape, DType dtype, size_t reserve_bytes);

 private:
  BufferPtr storage_[2];
  int next_ = 0;
};

struct KvCache {
  KvCache() = default;
  KvCache(Tensor keys_in, Tensor values_in) : keys(std::move(keys_in)), values(std::move(values_in)) {}

  Tensor keys;    // (B, H, t, Dh), undefined before the first step
  Tensor values;  // (B, H, t, Dh)

  bool empty() const { return !keys.defined(); }
  // Appends one decoding step's keys and values (B', H, 1, Dh) along the time axis, after the
  // reorder defer_select_rows left (B' rows).
  void append(const Tensor& step_keys, const Tensor& step_values);
  // Keeps rows `rows` (with repeats) of the batch axis: beam search's reorder.
  void select_rows(const std::vector<int64_t>& rows);
  // The same reorder, done by the next append: keys and values keep their old rows until then,
  // so a cache that is read only after an append (self-attention) reorders this way.
  void defer_select_rows(const std::vector<int64_t>& rows);

 private:
  std::optional<std::vector<int64_t>> pending_rows_;  // the reorder the next append does
  StoragePair key_storage_, value_storage_;
};

}  // namespace attn::layers
