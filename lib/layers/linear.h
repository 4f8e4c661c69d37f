#pragma once
// Linear: y = x W^T + b with W (out, in) Xavier-initialised and b zero.
//
// Shapes: x (..., in) -> y (..., out).
#include <string>

#include "core/parameter_store.h"
#include "layers/run_context.h"

namespace attn::layers {

class Linear {
 public:
  Linear() = default;
  Linear(ParameterStore& store, const std::string& name, int64_t in_features, int64_t out_features, bool bias = true);

  Tensor operator()(Tape& tape, const Tensor& x) const;
  const Tensor& weight() const { return weight_; }
  const Tensor& bias() const { return bias_; }

 private:
  Tensor weight_;  // (out, in)
  Tensor bias_;    // (out) or undefined
};

}  // namespace attn::layers
