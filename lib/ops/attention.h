#pragma once
// attention: fused scaled dot-product attention, one op with its own backward.
//
//   S = Q K^T / sqrt(Dh) + A + M,   P = softmax(S) over keys,   O = dropout(P) V
//
// Shapes: B batch, H heads, Tq query length, Tk key length, Dh per-head width.
//   q (B, H, Tq, Dh), k (B, H, Tk, Dh), v (B, H, Tk, Dh) -> output (B, H, Tq, Dh),
//   weights (B, H, Tq, Tk).
// M is kMaskValue (ops/masks.h) where a key is hidden and 0 elsewhere, so hidden keys get a
// weight of exactly 0 (a row with every key hidden stays finite instead of turning into NaN).
// A is the mask's optional per-head additive bias over the visible keys (ALiBi's distance
// penalty); it is a constant, so the backward is softmax's whatever A is, and A gets no gradient.
// The weights P are an output too; with AttentionOptions::weights_grad a loss on them (guided
// alignment, ops/guided_alignment_loss.h) backpropagates: dP = dropout'(dO V^T) + dL/dP.
#include <cstdint>
#include <cstdlib>
#include <utility>
#include <vector>

#include "autograd/tape.h"
#include "core/choice.h"
#include "core/rng.h"
#include "core/tensor.h"

namespace attn::ops {

// A(head, query position i, key position j) = -slopes[head] * |i - j|, added to the scaled score
// of a visible key: ALiBi's linear distance penalty (Press et al. 2022), one slope per head.
// Under a causal mask the visible keys have j <= i, so it is the paper's -m (i - j); without
// one (the encoder) it is the same penalty on both sides. Held as slopes, not as a function of
// (head, i, j), so that the softmax adds it with one vectorised multiply per score.
struct AttentionBias {
  std::vector<float> slopes;  // (H); empty: no bias

  explicit operator bool() const { return !slopes.empty(); }
  float operator()(int64_t head, int64_t query_position, int64_t key_position) const {
    return -slopes[size_t(head)] * float(std::abs(query_position - key_position));
  }
};

// Which keys each query sees, and what is added to their scores: built once per batch (encoder
// self-attention, decoder self-attention, cross-attention) and handed down as one value.
//
// Positions: key j is at position j; query row i is at position i + (Tk - Tq), the offset form,
// so that a decoding step (Tq = 1 over a KV cache of Tk keys) is at position Tk - 1, as its row
// is in the full forward.
struct AttentionMask {
  // (B) valid keys per batch row; empty = all valid. Keys j >= length get weight exactly 0.
  std::vector<int32_t> key_lengths;
  // Query i sees keys j <= its position: with the offset form this also serves incremental
  // decoding with a KV cache (Tq = 1 sees all Tk keys). Needs Tq <= Tk.
  bool causal = false;
  // Empty: no bias.
  AttentionBias bias;

  static AttentionMask padding(std::vector<int32_t> key_lengths) { return {std::move(key_lengths), false, {}}; }
  static AttentionMask causal_mask(AttentionBias bias = {}) { return {{}, true, std::move(bias)}; }
};

struct AttentionOptions {
  AttentionMask mask;
  // Dropout on the attention weights with inverted scaling 1 / (1 - dropout), applied only when
  // training; draws from *rng (required then).
  float dropout = 0.f;
  bool training = false;
  Rng* rng = nullptr;
  Precision precision = Precision::f32;  // of the four products, forward and backward (GemmOptions)
  // The weights output gets a gradient slot on the tape, and the backward adds what a later op
  // wrote into it to dP. Off: the weights are an output only (no gradient), and the backward is
  // bit for bit the one without this option.
  bool weights_grad = false;
};

struct AttentionResult {
  Tensor output;   // (B, H, Tq, Dh)
  Tensor weights;  // (B, H, Tq, Tk) softmax probabilities before dropout, for attention dumps;
                   // differentiable with options.weights_grad, an output only otherwise
};

AttentionResult attention(Tape& tape, const Tensor& q, const Tensor& k, const Tensor& v,
                          const AttentionOptions& options = {});

// The keys and values a decoding step attends over, in one of two forms.
//  - Storages: (B, H, capacity, Dh) tensors whose first `length` time positions hold them, the
//    rest room to grow in. With a row map, query row r reads stored row (*rows)[r]: beam
//    search's beams share their sentence's memory (cross-attention).
//  - Steps: one f32 (R_j, H, 1, Dh) tensor of keys and one of values per time position j, as a
//    KV cache's appends made them; query row r reads row (*step_rows)[j * R + r] of step j, R
//    being q's rows. A beam search reorder rewrites these row numbers instead of moving keys.
struct KeyValues {
  Tensor keys, values;                             // storages: (B, H, capacity, Dh), f32 or bf16
  int64_t length = 0;                              // Tk
  const std::vector<int64_t>* rows = nullptr;      // storages: (R) rows of B, or none: row r reads row r
  const std::vector<Tensor>* step_keys = nullptr;  // steps: (Tk) tensors (R_j, H, 1, Dh)
  const std::vector<Tensor>* step_values = nullptr;
  const std::vector<int32_t>* step_rows = nullptr;  // steps: (Tk, R)

  bool in_steps() const { return step_keys != nullptr; }
};

// attention()'s forward for one query per row (q (B, H, 1, Dh), of the keys' dtype) over the
// kv.length keys, without dropout or gradient: incremental decoding. It runs in attn's
// own loops, one (b, h) row at a time, where attention() makes two batched products of a few
// hundred flops per row and pays oneDNN's dispatch for each; the sums run in another order, so
// it agrees with attention() to rounding (tests/ops/test_attention.cpp bounds it).
AttentionResult attention_step(const Tensor& q, const KeyValues& kv, const AttentionMask& mask = {});

}  // namespace attn::ops
