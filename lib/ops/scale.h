#pragma once
// scale / add_scalar: the affine map y = factor * x + value with scalar constants
// (embedding * sqrt(D), 1 - z in the GRU cell as affine(z, -1, 1)).
//
// Shapes: x (...) -> y x's shape.
#include "autograd/tape.h"
#include "core/tensor.h"

namespace attn::ops {

// y = factor * x + value
Tensor affine(Tape& tape, const Tensor& x, float factor, float value);
// y = factor * x
Tensor scale(Tape& tape, const Tensor& x, float factor);
// y = x + value
Tensor add_scalar(Tape& tape, const Tensor& x, float value);

}  // namespace attn::ops
