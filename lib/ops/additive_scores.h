#pragma once
// additive_scores: the scores of additive (Bahdanau) attention in one fused op,
//   e[b, s] = sum_a v[a] tanh(keys[b, s, a] + query[b, a]).
// Unfused (broadcast add, tanh, a product with v), every decoder step would keep two
// (B, S, A) tensors for its backward: T steps of a long batch held gigabytes. This op keeps only
// its inputs and recomputes tanh in the backward, so a step keeps nothing of size S x A.
//
// Shapes: B batch, S source positions, A attention width. keys (B, S, A), query (B, A), v (A)
// (any shape of A elements, e.g. the (1, A) weight of a Linear) -> scores (B, S).
#include "autograd/tape.h"
#include "core/tensor.h"

namespace attn::ops {

Tensor additive_scores(Tape& tape, const Tensor& keys, const Tensor& query, const Tensor& v);

}  // namespace attn::ops
