#pragma once
// Layers start with zero biases, which would hide a bias used in the wrong place (the GRU's
// b_hn inside r * (.), a swapped LSTM gate block): cell tests give them random values first.
#include <cstdint>
#include <string>

#include "core/parameter_store.h"
#include "grad_check.h"

namespace attn::testing {

// N(0, 0.5^2) values for every "*.bias" parameter of a finalized store, seeds seed, seed + 1, ...
// in registration order.
inline void randomize_biases(ParameterStore& store, uint64_t seed) {
  const std::string suffix = ".bias";
  for (const auto& parameter : store.parameters()) {
    const std::string& name = parameter.name;
    if (name.size() < suffix.size() || name.compare(name.size() - suffix.size(), suffix.size(), suffix) != 0) continue;
    store.get(name).copy_from(random_tensor(parameter.tensor.shape(), seed++, 0.5f, false).to_vector());
  }
}

}  // namespace attn::testing
