#pragma once
// scale: y = factor * x with a scalar constant (the Transformer's embedding * sqrt(D)).
//
// Shapes: x (...) -> y x's shape.
#include "autograd/tape.h"
#include "core/tensor.h"

namespace attn::ops {

Tensor scale(Tape& tape, const Tensor& x, float factor);

}  // namespace attn::ops
