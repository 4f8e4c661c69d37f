#include "layers/feed_forward.h"

namespace attn::layers {

FeedForward::FeedForward(ParameterStore& store, const std::string& name, int64_t width, int64_t hidden,
                         Activation activation, float dropout)
    : in_(store, name + ".fc1", width, hidden),
      out_(store, name + ".fc2", hidden, width),
      activation_(activation),
      dropout_(dropout) {}

Tensor FeedForward::operator()(const RunContext& ctx, const Tensor& x) const {
  // A ReLU is the fc1 product's post-op; GELU's backward needs its input, so it stays an op.
  Tensor hidden = activation_ == Activation::relu
                      ? in_.with_relu(ctx.tape, x)
                      : ops::activation(ctx.tape, in_(ctx.tape, x), activation_);  // (B, T, F)
  // fc2 is the dropout's only reader: in bf16 training it comes out in bf16 (RunContext).
  return out_(ctx.tape, ctx.dropout(hidden, dropout_, ctx.matmul_input_dtype()));  // (B, T, D)
}

}  // namespace attn::layers
