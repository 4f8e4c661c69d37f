#pragma once
// Layer normalisation over the last axis.
//
// Shapes: x, y (..., D) with rows N = numel / D; gamma, beta (D).
#include "autograd/tape.h"
#include "core/tensor.h"

namespace attn::ops {

// y = gamma * (x - mean) / sqrt(var + epsilon) + beta, mean and (biased) variance per row.
Tensor layer_norm(Tape& tape, const Tensor& x, const Tensor& gamma, const Tensor& beta, float epsilon = 1e-5f);

}  // namespace attn::ops
