#pragma once
// log_softmax over the last axis.
//
// Shapes: x, y (..., V); rows N = numel / V.
#include "autograd/tape.h"
#include "core/tensor.h"

namespace attn::ops {

// y = x - logsumexp(x) over the last axis (log-probabilities, computed without exp overflow).
Tensor log_softmax(Tape& tape, const Tensor& x);

// The same for decoding: logits (R, V) become their row-wise log-probabilities in place, with no
// tape and no new buffer (search calls it once per output token).
void log_softmax_rows_in_place(Tensor& logits);

}  // namespace attn::ops
