#pragma once
// log_softmax over the last axis.
//
// Shapes: x, y (..., V); rows N = numel / V.
#include "autograd/tape.h"
#include "core/tensor.h"

namespace attn::ops {

// y = x - logsumexp(x) over the last axis (log-probabilities, computed without exp overflow).
Tensor log_softmax(Tape& tape, const Tensor& x);

}  // namespace attn::ops
