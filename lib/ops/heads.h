#pragma once
// split_heads / merge_heads: the multi-head reshapes around attention.
//
// Shapes: B batch, T length, D width, H heads, Dh = D / H per-head width.
//   split_heads: x (B, T, D) -> y (B, H, T, Dh),  y[b, h, t, e] = x[b, t, h * Dh + e]
//   merge_heads: x (B, H, T, Dh) -> y (B, T, H * Dh), the inverse.
// x is f32; y is `dtype`: bf16 when a matmul is its only reader (bf16 training's attention
// products and output projection), so that the one reorder that moves it converts it too.
// Gradients are f32 either way.
#include <cstdint>

#include "autograd/tape.h"
#include "core/tensor.h"

namespace attn::ops {

Tensor split_heads(Tape& tape, const Tensor& x, int64_t heads, DType dtype = DType::f32);
// The heads of D = `width` columns of x (B, T, W) from column `first` on: one part of a fused
// projection (q, k or v of qkv), without copying the part out first.
Tensor split_heads(Tape& tape, const Tensor& x, int64_t heads, int64_t first, int64_t width, DType dtype = DType::f32);
Tensor merge_heads(Tape& tape, const Tensor& x, DType dtype = DType::f32);

}  // namespace attn::ops
