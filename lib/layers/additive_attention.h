#pragma once
// AdditiveAttention (Bahdanau et al. 2015): a one-hidden-layer MLP scores every source position
// against the decoder state, a masked softmax turns the scores into weights, and the context
// is the weighted sum of the encoder states:
//   e_i = v^T tanh(W_q s + W_k h_i + b_k),   a = softmax(e + mask),   c = sum_i a_i h_i
// W_k h_i + b_k does not depend on the decoder step, so project_keys() runs once per batch and
// each step adds only the (B, A) query projection.
//
// Shapes: B rows, S source length, Q query width (decoder state), K key width (encoder states),
// A attention width.
#include <string>

#include "core/parameter_store.h"
#include "layers/linear.h"

namespace attn::layers {

struct AdditiveAttentionOutput {
  Tensor context;  // (B, K)
  Tensor weights;  // (B, 1, S) softmax rows; masked (padded) positions are exactly 0
};

class AdditiveAttention {
 public:
  AdditiveAttention() = default;
  // Parameters name.query.weight (A, Q), name.key.{weight (A, K), bias (A)}, name.v.weight (1, A).
  AdditiveAttention(ParameterStore& store, const std::string& name, int64_t query_width, int64_t key_width,
                    int64_t attention_width);

  // W_k h + b_k: states (B, S, K) -> keys (B, S, A).
  Tensor project_keys(Tape& tape, const Tensor& states) const;
  // query (B, Q); keys = project_keys(states) (B, S, A); states (B, S, K); mask (B, 1, S) additive
  // (ops::key_padding_mask: 0 on real positions, kMaskValue on padding). The context
  // weights x states is multiplied in `precision`.
  AdditiveAttentionOutput operator()(Tape& tape, const Tensor& query, const Tensor& keys, const Tensor& states,
                                     const Tensor& mask, Precision precision) const;

 private:
  Linear query_, key_;
  Tensor v_;  // (1, A): read as a vector, never multiplied as a Linear, so it has no matmul forms
};

}  // namespace attn::layers
