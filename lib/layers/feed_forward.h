#pragma once
// FeedForward: the Transformer's position-wise FFN, W2 drop(act(W1 x + b1)) + b2.
//
// Shapes: x (B, T, D) -> hidden (B, T, F) -> (B, T, D).
#include <string>

#include "layers/linear.h"
#include "ops/activation.h"

namespace attn::layers {

class FeedForward {
 public:
  FeedForward() = default;
  FeedForward(ParameterStore& store, const std::string& name, int64_t width, int64_t hidden, Activation activation,
              float dropout);
  Tensor operator()(const RunContext& ctx, const Tensor& x) const;

 private:
  Linear in_;
  Linear out_;
  Activation activation_ = Activation::relu;
  float dropout_ = 0.f;
};

}  // namespace attn::layers
