#include "layers/multi_head_attention.h"

#include "ops/attention.h"
#include "ops/heads.h"

namespace attn::layers {

MultiHeadAttention::MultiHeadAttention(ParameterStore& store, const std::string& name, Kind kind, int64_t width,
                                       int64_t heads, float attention_dropout, const PositionScheme* positions)
    : heads_(heads), attention_dropout_(attention_dropout), positions_(positions) {
  ATTN_CHECK(heads >= 1 && width % heads == 0, name, ": width ", width, " is not divisible by ", heads, " heads");
  if (kind == Kind::self) {
    qkv_ = Linear(store, name + ".qkv", width, 3 * width);
  } else {
    query_ = Linear(store, name + ".q", width, width);
    kv_ = Linear(store, name + ".kv", width, 2 * width);
  }
  output_ = Linear(store, name + ".out", width, width);
}

AttentionOutput MultiHeadAttention::attend(const RunContext& ctx, const Tensor& queries, const ops::KeyValues& kv,
                                           const ops::AttentionMask& mask, bool weights_grad) const {
  ops::AttentionResult result;  // output (B, H, Tq, Dh)
  if (queries.dim(2) == 1 && !ctx.training && !weights_grad && !ctx.tape.needs_grad(queries, kv.keys, kv.values)) {
    result = ops::attention_step(queries, kv, mask);
  } else {
    ATTN_CHECK(!kv.in_steps(), "attention: a KV cache's steps are read by decoding steps only");
    ATTN_CHECK(kv.length == kv.keys.dim(2) && !kv.rows, "attention: ", kv.length, " keys of a storage of ",
               kv.keys.dim(2), kv.rows ? " read through a row map (decoding steps only)" : "");
    ops::AttentionOptions options;
    options.weights_grad = weights_grad;
    options.mask = mask;
    options.dropout = attention_dropout_;
    options.training = ctx.training;
    options.rng = ctx.rng;
    options.precision = ctx.precision;
    result = ops::attention(ctx.tape, queries, kv.keys, kv.values, options);
  }
  Tensor merged = ops::merge_heads(ctx.tape, result.output, ctx.matmul_input_dtype());  // (B, Tq, D)
  return {output_(ctx.tape, merged), result.weights};
}

AttentionOutput MultiHeadAttention::self_attention(const RunContext& ctx, const Tensor& x,
                                                   const ops::AttentionMask& mask) const {
  const int64_t width = x.dim(-1);
  const DType dtype = ctx.matmul_input_dtype();
  Tensor qkv = qkv_(ctx.tape, x);  // (B, T, 3D): the heads are read out of it in place
  Tensor q = ops::split_heads(ctx.tape, qkv, heads_, 0, width, dtype);  // (B, H, T, Dh)
  Tensor k = ops::split_heads(ctx.tape, qkv, heads_, width, width, dtype);
  Tensor v = ops::split_heads(ctx.tape, qkv, heads_, 2 * width, width, dtype);
  if (positions_) positions_->rotate_queries_keys(ctx.tape, q, k, 0);
  return attend(ctx, q, {k, v, k.dim(2)}, mask);
}

AttentionOutput MultiHeadAttention::self_attention_step(const RunContext& ctx, const Tensor& x, KvCache& cache,
                                                        const ops::AttentionMask& mask) const {
  const int64_t width = x.dim(-1);
  const int64_t position = cache.steps();
  Tensor qkv = qkv_(ctx.tape, x);                                    // (B, 1, 3D)
  Tensor k = ops::split_heads(ctx.tape, qkv, heads_, width, width);  // (B, H, 1, Dh)
  Tensor v = ops::split_heads(ctx.tape, qkv, heads_, 2 * width, width);
  Tensor q = ops::split_heads(ctx.tape, qkv, heads_, 0, width);
  if (positions_) positions_->rotate_queries_keys(ctx.tape, q, k, position);
  cache.append(k, v);
  // The newest query sees every cached key (causal in the offset form).
  return attend(ctx, q, cache.entries(), mask);
}

KvCache MultiHeadAttention::project_memory(const RunContext& ctx, const Tensor& memory) const {
  const int64_t width = memory.dim(-1);
  const DType dtype = ctx.matmul_input_dtype();
  Tensor kv = kv_(ctx.tape, memory);  // (B, S, 2D)
  return KvCache{ops::split_heads(ctx.tape, kv, heads_, 0, width, dtype),
                 ops::split_heads(ctx.tape, kv, heads_, width, width, dtype)};
}

AttentionOutput MultiHeadAttention::cross_attention(const RunContext& ctx, const Tensor& x, const KvCache& memory,
                                                    const ops::AttentionMask& mask, bool weights_grad) const {
  Tensor q = ops::split_heads(ctx.tape, query_(ctx.tape, x), heads_, ctx.matmul_input_dtype());  // (B, H, Tq, Dh)
  return attend(ctx, q, memory.entries(), mask, weights_grad);
}

}  // namespace attn::layers
