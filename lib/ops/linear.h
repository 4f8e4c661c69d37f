#pragma once
// linear: y = x W^T + b, the affine map of every projection layer.
//
// Shapes: x (..., K), weight (N, K), bias (N) or undefined -> y (..., N).
#include "autograd/tape.h"
#include "core/tensor.h"

namespace attn::ops {

Tensor linear(Tape& tape, const Tensor& x, const Tensor& weight, const Tensor& bias);

}  // namespace attn::ops
