#pragma once
// Linear: y = x W^T + b with W (out, in) Xavier-initialised and b zero. In decoding it
// multiplies with the form of W its store prepared (ParameterStore::prepare_matmul_weights).
//
// Shapes: x (..., in) -> y (..., out).
#include <memory>
#include <string>

#include "core/parameter_store.h"
#include "layers/run_context.h"

namespace attn::layers {

class Linear {
 public:
  Linear() = default;
  Linear(ParameterStore& store, const std::string& name, int64_t in_features, int64_t out_features, bool bias = true);

  Tensor operator()(Tape& tape, const Tensor& x) const;
  // relu(x W^T + b) in one product (ops::linear_relu).
  Tensor with_relu(Tape& tape, const Tensor& x) const;
  const Tensor& weight() const { return weight_; }
  const Tensor& bias() const { return bias_; }
  // The weight with the forms its store prepared (what the products multiply).
  const MatmulWeight& forms() const { return *forms_; }

 private:
  Tensor weight_;                              // (out, in)
  std::shared_ptr<const MatmulWeight> forms_;  // weight_ in the store's decoding precision
  Tensor bias_;                                // (out) or undefined
};

}  // namespace attn::layers
