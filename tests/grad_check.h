#pragma once
// Finite-difference gradient checks for ops and layers.
//
// For f(inputs) -> y, the checked scalar is L = sum_i w_i y_i with fixed random weights w, so
// every output element matters. The analytic gradient comes from Tape::backward seeded with w;
// the numeric one from central differences (L(x + h) - L(x - h)) / 2h, with L summed in double.
#include <functional>
#include <string>
#include <vector>

#include "autograd/tape.h"
#include "core/rng.h"
#include "core/tensor.h"

namespace attn::testing {

using Function = std::function<Tensor(Tape&, const std::vector<Tensor>&)>;

struct GradCheckOptions {
  float step = 1e-2f;  // h; f32 arithmetic wants a large step
  float absolute_tolerance = 2e-3f;
  float relative_tolerance = 2e-2f;
  uint64_t seed = 7;
};

// Returns an empty string when every input gradient matches, else a description of the worst
// mismatch (input, index, analytic, numeric). Inputs that do not require grad are skipped.
std::string check_gradients(const Function& function, std::vector<Tensor> inputs, GradCheckOptions options = {});

// A tensor of N(0, scale^2) values that requires a gradient.
Tensor random_tensor(const Shape& shape, uint64_t seed, float scale = 1.f, bool requires_grad = true);

}  // namespace attn::testing
