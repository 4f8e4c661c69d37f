#pragma once
// softmax over the last axis, with an optional additive mask.
//
// Shapes: x (..., S) with rows N = numel / S; mask of the same rank as x, each dim equal to x's
// or 1. The mask broadcasts (only the mask does: x is never broadcast), so one (B,1,S) key
// padding mask serves every query row of scores (B,T,S), and one (1,T,T) causal mask serves every
// batch entry of (B,T,T). Heads: view scores (B,H,T,S) with a mask (B,1,1,S) or (1,1,T,S).
#include "autograd/tape.h"
#include "core/tensor.h"

namespace attn::ops {

// p = softmax(x + mask) over the last axis. The mask is additive (0 or kMaskValue from
// ops/mask.h) and receives no gradient. A masked position gets exactly 0 weight; a row whose
// every position is masked stays finite (uniform).
Tensor softmax(Tape& tape, const Tensor& x, const Tensor& mask = Tensor());

// The oneDNN kernels shared by softmax and log_softmax (no tape), on rows folded to (N, S).
enum class SoftmaxKind { softmax, log_softmax };
// y = softmax(x) or log_softmax(x) over the last axis; y may be x itself (in place).
void softmax_rows_forward(const Tensor& x, const Tensor& y, SoftmaxKind kind);
// grad(x) += J^T grad(y), from the output y alone (see the derivatives in softmax.cpp).
void softmax_rows_backward(const Tensor& y, const Tensor& x, SoftmaxKind kind);

}  // namespace attn::ops
