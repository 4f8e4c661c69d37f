#pragma once
// mul: the elementwise (Hadamard) product y = a * b, the gates of the GRU cell.
//
// Shapes: a (...), b a's shape -> y a's shape. No broadcasting.
#include "autograd/tape.h"
#include "core/tensor.h"

namespace attn::ops {

Tensor mul(Tape& tape, const Tensor& a, const Tensor& b);

}  // namespace attn::ops
