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
// Otherwise reserves about numel(x) values of rng's stream and splits each 64-bit draw
// mix64(seed, word) into four 16-bit uniforms u: mask_i = (u_i >= p * 2^16). The mask depends
// on (seed, counter) only, never on the thread count; p has a resolution of 2^-16.
// y is `dtype` (x is f32): bf16 for a matmul's input, rounded as oneDNN's reorders round,
// in the same pass; the gradient is f32 either way.
Tensor dropout(Tape& tape, const Tensor& x, float p, bool training, Rng& rng, DType dtype = DType::f32);

}  // namespace attn::ops
