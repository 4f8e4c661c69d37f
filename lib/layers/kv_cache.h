#pragma once
// KvCache: the keys and values an attention layer has already computed during incremental
// decoding, so step t attends over steps 0..t without recomputing the prefix. For
// self-attention it grows by one step per call; for cross-attention it holds the projected
// encoder output, computed once per sentence. Beam search reorders its rows.
//
// Shapes: keys, values (B, H, t, Dh); a step (B, H, 1, Dh).
#include <vector>

#include "core/tensor.h"

namespace attn::layers {

struct KvCache {
  Tensor keys;    // (B, H, t, Dh), undefined before the first step
  Tensor values;  // (B, H, t, Dh)

  bool empty() const { return !keys.defined(); }
  // Appends one decoding step's keys and values along the time axis.
  void append(const Tensor& step_keys, const Tensor& step_values);
  // Keeps rows `rows` (with repeats) of the batch axis: beam search's reorder.
  void select_rows(const std::vector<int64_t>& rows);
};

// x (B, H, t, Dh) ++ step (B, H, s, Dh) along the time axis -> (B, H, t + s, Dh).
Tensor append_time(const Tensor& x, const Tensor& step);

}  // namespace attn::layers
