#include "layers/additive_attention.h"

#include "ops/additive_scores.h"
#include "ops/matmul.h"
#include "ops/softmax.h"

namespace attn::layers {

AdditiveAttention::AdditiveAttention(ParameterStore& store, const std::string& name, int64_t query_width,
                                     int64_t key_width, int64_t attention_width)
    : query_(store, name + ".query", query_width, attention_width, false),
      key_(store, name + ".key", key_width, attention_width),
      v_(store.add(name + ".v.weight", {1, attention_width}, init::xavier_uniform())) {}

Tensor AdditiveAttention::project_keys(Tape& tape, const Tensor& states) const { return key_(tape, states); }

AdditiveAttentionOutput AdditiveAttention::operator()(Tape& tape, const Tensor& query, const Tensor& keys,
                                                      const Tensor& states, const Tensor& mask,
                                                      Precision precision) const {
  int64_t batch = keys.dim(0), length = keys.dim(1);
  ATTN_CHECK(states.rank() == 3 && states.dim(0) == batch && states.dim(1) == length, "additive attention: keys ",
             to_string(keys.shape()), " and states ", to_string(states.shape()), " differ in (B, S)");
  // v^T tanh(keys + W_q s) fused: a step keeps no (B, S, A) tensor for its backward.
  Tensor scores = ops::additive_scores(tape, keys, query_(tape, query), v_).view({batch, 1, length});
  Tensor weights = ops::softmax(tape, scores, mask);  // (B, 1, S)
  ops::MatmulOptions product;
  product.precision = precision;
  Tensor context = ops::matmul(tape, weights, states, product);  // (B, 1, K)
  return {context.view({batch, states.dim(2)}), weights};
}

}  // namespace attn::layers
