#include "layers/transformer_layers.h"

#include "ops/add.h"

namespace attn::layers {

Residual::Residual(ParameterStore& store, const std::string& name, const TransformerLayerOptions& options)
    : norm_(store, name, options.width), dropout_(options.dropout), pre_norm_(options.pre_norm) {}

template <class Branch>
Tensor Residual::operator()(const RunContext& ctx, const Tensor& x, Branch&& branch) const {
  if (pre_norm_) return ops::add(ctx.tape, x, ctx.dropout(branch(norm_(ctx.tape, x)), dropout_));
  return norm_(ctx.tape, ops::add(ctx.tape, x, ctx.dropout(branch(x), dropout_)));
}

TransformerEncoderLayer::TransformerEncoderLayer(ParameterStore& store, const std::string& name,
                                                 const TransformerLayerOptions& options, int index,
                                                 const PositionScheme* positions)
    : index_(index),
      self_attention_(store, name + ".self_attn", MultiHeadAttention::Kind::self, options.width, options.heads,
                      options.attention_dropout, positions),
      feed_forward_(store, name + ".ffn", options.width, options.ffn_width, options.activation, options.dropout),
      attention_residual_(store, name + ".self_attn_norm", options),
      ffn_residual_(store, name + ".ffn_norm", options) {}

Tensor TransformerEncoderLayer::operator()(const RunContext& ctx, const Tensor& x,
                                           const ops::AttentionMask& mask) const {
  Tensor attended = attention_residual_(ctx, x, [&](const Tensor& input) {
    AttentionOutput result = self_attention_.self_attention(ctx, input, mask);
    if (ctx.attention_maps) ctx.attention_maps->add(AttentionKind::encoder_self, index_, result.weights);
    return result.output;
  });
  return ffn_residual_(ctx, attended, [&](const Tensor& input) { return feed_forward_(ctx, input); });
}

TransformerDecoderLayer::TransformerDecoderLayer(ParameterStore& store, const std::string& name,
                                                 const TransformerLayerOptions& options, int index,
                                                 const PositionScheme* positions)
    : index_(index),
      self_attention_(store, name + ".self_attn", MultiHeadAttention::Kind::self, options.width, options.heads,
                      options.attention_dropout, positions),
      cross_attention_(store, name + ".cross_attn", MultiHeadAttention::Kind::cross, options.width, options.heads,
                       options.attention_dropout),
      feed_forward_(store, name + ".ffn", options.width, options.ffn_width, options.activation, options.dropout),
      self_residual_(store, name + ".self_attn_norm", options),
      cross_residual_(store, name + ".cross_attn_norm", options),
      ffn_residual_(store, name + ".ffn_norm", options) {}

Tensor TransformerDecoderLayer::cross_and_ffn(const RunContext& ctx, const Tensor& x, const KvCache& memory,
                                              const ops::AttentionMask& memory_mask) const {
  Tensor attended = cross_residual_(ctx, x, [&](const Tensor& input) {
    const bool guided = ctx.guided && ctx.guided->layer == index_;
    AttentionOutput result = cross_attention_.cross_attention(ctx, input, memory, memory_mask, guided);
    if (ctx.attention_maps) ctx.attention_maps->add(AttentionKind::cross, index_, result.weights);
    if (guided) ctx.guided->weights = result.weights;
    return result.output;
  });
  return ffn_residual_(ctx, attended, [&](const Tensor& input) { return feed_forward_(ctx, input); });
}

Tensor TransformerDecoderLayer::operator()(const RunContext& ctx, const Tensor& x, const Tensor& memory,
                                           const DecoderMasks& masks) const {
  Tensor attended = self_residual_(ctx, x, [&](const Tensor& input) {
    AttentionOutput result = self_attention_.self_attention(ctx, input, masks.self);
    if (ctx.attention_maps) ctx.attention_maps->add(AttentionKind::decoder_self, index_, result.weights);
    return result.output;
  });
  return cross_and_ffn(ctx, attended, project_memory(ctx, memory), masks.memory);
}

Tensor TransformerDecoderLayer::step(const RunContext& ctx, const Tensor& x, DecoderLayerCache& cache,
                                     const DecoderMasks& masks) const {
  Tensor attended = self_residual_(ctx, x, [&](const Tensor& input) {
    AttentionOutput result = self_attention_.self_attention_step(ctx, input, cache.self, masks.self);
    if (ctx.attention_maps) ctx.attention_maps->add(AttentionKind::decoder_self, index_, result.weights);
    return result.output;
  });
  return cross_and_ffn(ctx, attended, cache.memory, masks.memory);
}

}  // namespace attn::layers
