#pragma once
// LayerNorm over the last axis with a learned scale (gamma, ones) and shift (beta, zeros).
//
// Shapes: x (..., D) -> (..., D).
#include <string>

#include "core/parameter_store.h"
#include "layers/run_context.h"

namespace attn::layers {

class LayerNorm {
 public:
  LayerNorm() = default;
  LayerNorm(ParameterStore& store, const std::string& name, int64_t width);
  Tensor operator()(Tape& tape, const Tensor& x) const;

 private:
  Tensor gamma_;  // (D)
  Tensor beta_;   // (D)
};

}  // namespace attn::layers
