#include "layers/multi_head_attention.h"

#include "ops/attention.h"
#include "ops/heads.h"

namespace attn::layers {

MultiHeadAttention::MultiHeadAttention(ParameterStore& store, const std::string& name, Kind kind, int64_t width,
                                       int64_t heads, float attention_dropout)
    : heads_(heads), attention_dropout_(attention_dropout) {
  ATTN_CHECK(heads >= 1 && width % heads == 0, name, ": width ", width, " is not divisible by ", heads, " heads");
  if (kind == Kind::self) {
    qkv_ = Linear(store, name + ".qkv", width, 3 * width);
  } else {
    query_ = Linear(store, name + ".q", width, width);
    kv_ = Linear(store, name + ".kv", width, 2 * width);
  }
  output_ = Linear(store, name + ".out", width, width);
}

AttentionOutput MultiHeadAttention::attend(const RunContext& ctx, const Tensor& queries, const Tensor& keys,
                                           const Tensor& values, const std::vector<int32_t>& key_lengths,
                                           bool causal) const {
  ops::AttentionOptions options;
  options.causal = causal;
  options.key_lengths = key_lengths;
  options.dropout = attention_dropout_;
  options.training = ctx.training;
  options.rng = ctx.rng;
  options.precision = ctx.precision;
  ops::AttentionResult result = ops::attention(ctx.tape, queries, keys, values, options);  // (B, H, Tq, Dh)
  Tensor merged = ops::merge_heads(ctx.tape, result.output, ctx.matmul_input_dtype());     // (B, Tq, D)
  return {output_(ctx.tape, merged), result.weights};
}

AttentionOutput MultiHeadAttention::self_attention(const RunContext& ctx, const Tensor& x,
                                                   const std::vector<int32_t>& key_lengths, bool causal) const {
  const int64_t width = x.dim(-1);
  const DType dtype = ctx.matmul_input_dtype();
  Tensor qkv = qkv_(ctx.tape, x);  // (B, T, 3D): the heads are read out of it in place
  Tensor q = ops::split_heads(ctx.tape, qkv, heads_, 0, width, dtype);  // (B, H, T, Dh)
  Tensor k = ops::split_heads(ctx.tape, qkv, heads_, width, width, dtype);
  Tensor v = ops::split_heads(ctx.tape, qkv, heads_, 2 * width, width, dtype);
  return attend(ctx, q, k, v, key_lengths, causal);
}

AttentionOutput MultiHeadAttention::self_attention_step(const RunContext& ctx, const Tensor& x, KvCache& cache) const {
  const int64_t width = x.dim(-1);
  Tensor qkv = qkv_(ctx.tape, x);  // (B, 1, 3D)
  cache.append(ops::split_heads(ctx.tape, qkv, heads_, width, width),
               ops::split_heads(ctx.tape, qkv, heads_, 2 * width, width));
  Tensor q = ops::split_heads(ctx.tape, qkv, heads_, 0, width);  // (B, H, 1, Dh)
  // The newest query sees every cached key: causal in the offset form, nothing to mask.
  return attend(ctx, q, cache.keys, cache.values, {}, false);
}

KvCache MultiHeadAttention::project_memory(const RunContext& ctx, const Tensor& memory) const {
  const int64_t width = memory.dim(-1);
  const DType dtype = ctx.matmul_input_dtype();
  Tensor kv = kv_(ctx.tape, memory);  // (B, S, 2D)
  return KvCache{ops::split_heads(ctx.tape, kv, heads_, 0, width, dtype),
                 ops::split_heads(ctx.tape, kv, heads_, width, width, dtype)};
}

AttentionOutput MultiHeadAttention::cross_attention(const RunContext& ctx, const Tensor& x, const KvCache& memory,
                                                    const std::vector<int32_t>& memory_lengths) const {
  Tensor q = ops::split_heads(ctx.tape, query_(ctx.tape, x), heads_, ctx.matmul_input_dtype());  // (B, H, Tq, Dh)
  return attend(ctx, q, memory.keys, memory.values, memory_lengths, false);
}

}  // namespace attn::layers
