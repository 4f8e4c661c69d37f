#pragma once
// MultiHeadAttention (Vaswani et al. 2017): H heads of scaled dot-product attention over
// d_k = D / H dimensional projections, merged and projected back to D.
//
// Self-attention projects Q, K, V with one fused (3D, D) matrix; cross-attention projects Q
// from the decoder and K, V (one fused (2D, D) matrix) from the encoder output ("memory").
//
// Shapes: x (B, Tq, D), memory (B, S, D), heads (B, H, T, Dh) -> output (B, Tq, D);
// weights (B, H, Tq, Tk).
#include <string>
#include <vector>

#include "layers/kv_cache.h"
#include "layers/linear.h"

namespace attn::layers {

struct AttentionOutput {
  Tensor output;   // (B, Tq, D)
  Tensor weights;  // (B, H, Tq, Tk)
};

class MultiHeadAttention {
 public:
  enum class Kind { self, cross };

  MultiHeadAttention() = default;
  MultiHeadAttention(ParameterStore& store, const std::string& name, Kind kind, int64_t width, int64_t heads,
                     float attention_dropout);

  // Self-attention over x; `causal` hides future positions, key_lengths hides padding.
  AttentionOutput self_attention(const RunContext& ctx, const Tensor& x, const std::vector<int32_t>& key_lengths,
                                 bool causal) const;
  // One decoding step (x: (B, 1, D)) against the cached past; appends this step to the cache.
  AttentionOutput self_attention_step(const RunContext& ctx, const Tensor& x, KvCache& cache) const;

  // Projects the encoder output into keys and values once (a cross-attention cache).
  KvCache project_memory(const RunContext& ctx, const Tensor& memory) const;
  // Cross-attention of x over projected memory.
  AttentionOutput cross_attention(const RunContext& ctx, const Tensor& x, const KvCache& memory,
                                  const std::vector<int32_t>& memory_lengths) const;

 private:
  AttentionOutput attend(const RunContext& ctx, const Tensor& queries, const Tensor& keys, const Tensor& values,
                         const std::vector<int32_t>& key_lengths, bool causal) const;

  int64_t heads_ = 1;
  float attention_dropout_ = 0.f;
  Linear qkv_;     // self: (3D, D)
  Linear query_;   // cross: (D, D)
  Linear kv_;      // cross: (2D, D)
  Linear output_;  // (D, D)
};

}  // namespace attn::layers
