#pragma once
// add: y = alpha * a + beta * b, the residual connection, positional encodings and sub().
//
// Shapes: a (..., D), b either a's shape, or a's trailing dims (e.g. (T, D) added to every
// batch row of (B, T, D): the one broadcast we allow) -> y a's shape.
#include "autograd/tape.h"
#include "core/tensor.h"

namespace attn::ops {

Tensor add(Tape& tape, const Tensor& a, const Tensor& b, float alpha = 1.f, float beta = 1.f);

// y = a - b (same shape rules as add).
Tensor sub(Tape& tape, const Tensor& a, const Tensor& b);

}  // namespace attn::ops
