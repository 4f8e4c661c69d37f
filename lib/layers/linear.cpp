#include "layers/linear.h"

#include "ops/linear.h"

namespace attn::layers {

Linear::Linear(ParameterStore& store, const std::string& name, int64_t in_features, int64_t out_features, bool bias)
    : weight_(store.add(name + ".weight", {out_features, in_features}, init::xavier_uniform())),
      forms_(store.matmul_weight(name + ".weight")) {
  if (bias) bias_ = store.add(name + ".bias", {out_features}, init::zeros());
}

Tensor Linear::operator()(Tape& tape, const Tensor& x) const { return ops::linear(tape, x, *forms_, bias_); }

Tensor Linear::with_relu(Tape& tape, const Tensor& x) const { return ops::linear_relu(tape, x, *forms_, bias_); }

}  // namespace attn::layers
