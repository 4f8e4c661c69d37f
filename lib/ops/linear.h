#pragma once
// linear: y = x W^T + b, the affine map of every projection layer.
//
// Shapes: x (..., K), weight (N, K), bias (N) or undefined -> y (..., N).
#include "autograd/tape.h"
#include "core/matmul_weight.h"
#include "core/tensor.h"

namespace attn::ops {

Tensor linear(Tape& tape, const Tensor& x, const Tensor& weight, const Tensor& bias);

// The same with the form of `weight` its store prepared (core/matmul_weight.h): f32 is the
// function above, unchanged; bf16 multiplies with the bf16 copy (x converted once, kept in bf16
// for the backward; dW goes to the f32 parameter): bf16 decoding and bf16 training; int8
// (ops/quantized_linear.h) is for decoding and refuses a tape that wants gradients.
Tensor linear(Tape& tape, const Tensor& x, const MatmulWeight& weight, const Tensor& bias);

}  // namespace attn::ops
