#pragma once
// dropout: inverted dropout, y = x * mask / (1 - p) with mask_i ~ Bernoulli(1 - p), so the
// expected output equals the input and evaluation needs no rescaling.
//
// Shapes: x (...) -> y x's shape.
#include "autograd/tape.h"
#include "core/rng.h"
#include "core/tensor.h"

namespace attn::ops {

// When !training or p == 0, returns x itself (same storage, no copy, nothing recorded).
// Otherwise draws numel(x) values from rng's stream: mask_i = uniform_at(seed, first + i) >= p
// with first = rng.skip(numel), so the mask depends on (seed, counter), not on thread count.
Tensor dropout(Tape& tape, const Tensor& x, float p, bool training, Rng& rng);

}  // namespace attn::ops
