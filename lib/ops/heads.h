#pragma once
// split_heads / merge_heads: the multi-head reshapes around attention.
//
// Shapes: B batch, T length, D width, H heads, Dh = D / H per-head width.
//   split_heads: x (B, T, D) -> y (B, H, T, Dh),  y[b, h, t, e] = x[b, t, h * Dh + e]
//   merge_heads: x (B, H, T, Dh) -> y (B, T, H * Dh), the inverse.
#include <cstdint>

#include "autograd/tape.h"
#include "core/tensor.h"

namespace attn::ops {

Tensor split_heads(Tape& tape, const Tensor& x, int64_t heads);
Tensor merge_heads(Tape& tape, const Tensor& x);

}  // namespace attn::ops
