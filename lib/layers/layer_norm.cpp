#include "layers/layer_norm.h"

#include "ops/layer_norm.h"

namespace attn::layers {

LayerNorm::LayerNorm(ParameterStore& store, const std::string& name, int64_t width)
    : gamma_(store.add(name + ".weight", {width}, init::ones())),
      beta_(store.add(name + ".bias", {width}, init::zeros())) {}

Tensor LayerNorm::operator()(Tape& tape, const Tensor& x) const { return ops::layer_norm(tape, x, gamma_, beta_); }

}  // namespace attn::layers
