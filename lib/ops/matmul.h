#pragma once
// matmul: c = alpha * op(a) op(b), where op transposes the last two axes when asked.
//
// Shapes: op(a) (..., M, K), op(b) (..., K, N) -> c (..., M, N), equal leading batch dims;
// or b of rank 2 with a of any rank >= 2 (one matrix for every row of a; a is not transposed).
#include "autograd/tape.h"
#include "core/choice.h"
#include "core/tensor.h"

namespace attn::ops {

struct MatmulOptions {
  bool transpose_a = false;
  bool transpose_b = false;
  float alpha = 1.f;
  Precision precision = Precision::f32;  // of the products, forward and backward (GemmOptions)
};

Tensor matmul(Tape& tape, const Tensor& a, const Tensor& b, const MatmulOptions& options = {});

}  // namespace attn::ops
