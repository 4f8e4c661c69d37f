#pragma once
// attention: fused scaled dot-product attention, one op with its own backward.
//
//   S = Q K^T / sqrt(Dh) + M,   P = softmax(S) over keys,   O = dropout(P) V
//
// Shapes: B batch, H heads, Tq query length, Tk key length, Dh per-head width.
//   q (B, H, Tq, Dh), k (B, H, Tk, Dh), v (B, H, Tk, Dh) -> output (B, H, Tq, Dh),
//   weights (B, H, Tq, Tk).
// M is kMaskValue (ops/mask.h) where a key is hidden and 0 elsewhere, so hidden keys get a
// weight of exactly 0 (a row with every key hidden stays finite instead of turning into NaN).
#include <cstdint>
#include <vector>

#include "autograd/tape.h"
#include "core/choice.h"
#include "core/rng.h"
#include "core/tensor.h"

namespace attn::ops {

struct AttentionOptions {
  // Query i sees keys j <= i + (Tk - Tq): the offset form also serves incremental decoding with
  // a KV cache (Tq = 1 sees all Tk keys). Needs Tq <= Tk.
  bool causal = false;
  // (B) valid keys per batch row; empty = all valid. Keys j >= length get weight exactly 0.
  std::vector<int32_t> key_lengths;
  // Dropout on the attention weights with inverted scaling 1 / (1 - dropout), applied only when
  // training; draws from *rng (required then).
  float dropout = 0.f;
  bool training = false;
  Rng* rng = nullptr;
  Precision precision = Precision::f32;  // of the four products, forward and backward (GemmOptions)
};

struct AttentionResult {
  Tensor output;   // (B, H, Tq, Dh)
  Tensor weights;  // (B, H, Tq, Tk) softmax probabilities before dropout, for attention dumps;
                   // an output only: no gradient flows back through it
};

AttentionResult attention(Tape& tape, const Tensor& q, const Tensor& k, const Tensor& v,
                          const AttentionOptions& options = {});

}  // namespace attn::ops
