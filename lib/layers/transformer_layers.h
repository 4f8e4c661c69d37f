#pragma once
// The Transformer's encoder and decoder layers (Vaswani et al. 2017), post-norm as in the
// paper or pre-norm (norm inside the residual branch: steadier without long warmup).
//
//   post-norm: x = LN(x + drop(f(x)))      pre-norm: x = x + drop(f(LN(x)))
//
// Shapes: x (B, T, D), memory (B, S, D).
#include <string>

#include "io/config.h"
#include "layers/feed_forward.h"
#include "layers/layer_norm.h"
#include "layers/multi_head_attention.h"

namespace attn::layers {

struct TransformerLayerOptions {
  // model.transformer's declared defaults (io/config.h).
  int64_t width = io::defaults<io::TransformerConfig>().d_model;
  int64_t heads = io::defaults<io::TransformerConfig>().heads;
  int64_t ffn_width = io::defaults<io::TransformerConfig>().ffn_dim;
  float dropout = float(io::defaults<io::TransformerConfig>().dropout);
  float attention_dropout = float(io::defaults<io::TransformerConfig>().attention_dropout);
  Activation activation = io::defaults<io::TransformerConfig>().activation;
  bool pre_norm = io::defaults<io::TransformerConfig>().norm == Norm::pre;
};

// One residual sub-layer: the norm placement and the dropout on its branch.
class Residual {
 public:
  Residual() = default;
  Residual(ParameterStore& store, const std::string& name, const TransformerLayerOptions& options);
  template <class Branch>
  Tensor operator()(const RunContext& ctx, const Tensor& x, Branch&& branch) const;

 private:
  LayerNorm norm_;
  float dropout_ = 0.f;
  bool pre_norm_ = false;
};

// `positions` (may be null: no scheme acts inside attention) must outlive the layer.
class TransformerEncoderLayer {
 public:
  TransformerEncoderLayer(ParameterStore& store, const std::string& name, const TransformerLayerOptions& options,
                          int index, const PositionScheme* positions = nullptr);
  // `mask`: the source's padding and the scheme's bias (TransformerModel builds it per batch).
  Tensor operator()(const RunContext& ctx, const Tensor& x, const ops::AttentionMask& mask) const;

 private:
  int index_;
  MultiHeadAttention self_attention_;
  FeedForward feed_forward_;
  Residual attention_residual_, ffn_residual_;
};

// Per-layer decoding state: the self-attention past and the projected encoder output.
struct DecoderLayerCache {
  KvCache self;
  KvCache memory;
};

// The decoder's masks of one batch, shared by every decoder layer and every decoding step.
struct DecoderMasks {
  // Causal, with the scheme's bias. Causality alone keeps padded targets (which come last) out
  // of every real position's view; a decoding step sees its whole cache in the offset form.
  ops::AttentionMask self;
  ops::AttentionMask memory;  // cross-attention: the source's padding
};

class TransformerDecoderLayer {
 public:
  TransformerDecoderLayer(ParameterStore& store, const std::string& name, const TransformerLayerOptions& options,
                          int index, const PositionScheme* positions = nullptr);
  // Teacher-forced: all target positions at once.
  Tensor operator()(const RunContext& ctx, const Tensor& x, const Tensor& memory, const DecoderMasks& masks) const;
  // Incremental: one step (x: (B, 1, D)); the cache must hold the projected memory.
  Tensor step(const RunContext& ctx, const Tensor& x, DecoderLayerCache& cache, const DecoderMasks& masks) const;
  KvCache project_memory(const RunContext& ctx, const Tensor& memory) const {
    return cross_attention_.project_memory(ctx, memory);
  }

 private:
  Tensor cross_and_ffn(const RunContext& ctx, const Tensor& x, const KvCache& memory,
                       const ops::AttentionMask& memory_mask) const;

  int index_;
  MultiHeadAttention self_attention_, cross_attention_;
  FeedForward feed_forward_;
  Residual self_residual_, cross_residual_, ffn_residual_;
};

}  // namespace attn::layers
