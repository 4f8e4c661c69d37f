#pragma once
// MultiHeadAttention (Vaswani et al. 2017): H heads of scaled dot-product attention over
// d_k = D / H dimensional projections, merged and projected back to D.
//
// Self-attention projects Q, K, V with one fused (3D, D) matrix; cross-attention projects Q
// from the decoder and K, V (one fused (2D, D) matrix) from the encoder output ("memory").
//
// Which keys a query sees and any bias on its scores come in one ops::AttentionMask, built once
// per batch by the model. A self-attention hands its new queries and keys to the position
// scheme (rotate_queries_keys) when it has one.
//
// Shapes: x (B, Tq, D), memory (B, S, D), heads (B, H, T, Dh) -> output (B, Tq, D);
// weights (B, H, Tq, Tk).
#include <string>

#include "layers/kv_cache.h"
#include "layers/linear.h"
#include "layers/positions.h"

namespace attn::layers {

struct AttentionOutput {
  Tensor output;   // (B, Tq, D)
  Tensor weights;  // (B, H, Tq, Tk)
};

class MultiHeadAttention {
 public:
  enum class Kind { self, cross };

  MultiHeadAttention() = default;
  // `positions` (self-attention only; may be null) must outlive the layer.
  MultiHeadAttention(ParameterStore& store, const std::string& name, Kind kind, int64_t width, int64_t heads,
                     float attention_dropout, const PositionScheme* positions = nullptr);

  // Self-attention over x at positions 0 .. T - 1.
  AttentionOutput self_attention(const RunContext& ctx, const Tensor& x, const ops::AttentionMask& mask) const;
  // One decoding step (x: (B, 1, D)) against the cached past; appends this step to the cache.
  // `mask` is the one of the full forward (ops::attention places the step at the cache offset).
  AttentionOutput self_attention_step(const RunContext& ctx, const Tensor& x, KvCache& cache,
                                      const ops::AttentionMask& mask) const;

  // Projects the encoder output into keys and values once (a cross-attention cache).
  KvCache project_memory(const RunContext& ctx, const Tensor& memory) const;
  // Cross-attention of x over projected memory; with weights_grad the weights returned are
  // differentiable (ops::AttentionOptions::weights_grad).
  AttentionOutput cross_attention(const RunContext& ctx, const Tensor& x, const KvCache& memory,
                                  const ops::AttentionMask& mask, bool weights_grad = false) const;

 private:
  // queries (B, H, Tq, Dh) over kv: ops::attention_step for one query without gradient
  // (decoding), else ops::attention over all of kv's keys.
  AttentionOutput attend(const RunContext& ctx, const Tensor& queries, const ops::KeyValues& kv,
                         const ops::AttentionMask& mask, bool weights_grad = false) const;

  int64_t heads_ = 1;
  float attention_dropout_ = 0.f;
  const PositionScheme* positions_ = nullptr;
  Linear qkv_;     // self: (3D, D)
  Linear query_;   // cross: (D, D)
  Linear kv_;      // cross: (2D, D)
  Linear output_;  // (D, D)
};

}  // namespace attn::layers
