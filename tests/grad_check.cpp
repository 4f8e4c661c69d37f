#include "grad_check.h"

#include <cmath>
#include <sstream>

namespace attn::testing {

namespace {

double weighted_sum(const Tensor& output, const std::vector<float>& weights) {
  std::vector<float> values = output.to_vector();
  double sum = 0.0;
  for (size_t i = 0; i < values.size(); ++i) sum += double(values[i]) * double(weights[i]);
  return sum;
}

double evaluate(const Function& function, const std::vector<Tensor>& inputs, const std::vector<float>& weights) {
  Tape tape;
  tape.set_recording(false);
  return weighted_sum(function(tape, inputs), weights);
}

}  // namespace

Tensor random_tensor(const Shape& shape, uint64_t seed, float scale, bool requires_grad) {
  Tensor tensor = Tensor::empty(shape);
  Rng rng(seed);
  float* values = tensor.data();
  for (int64_t i = 0; i < tensor.numel(); ++i) values[i] = rng.normal(0.f, scale);
  tensor.set_requires_grad(requires_grad);
  return tensor;
}

std::string check_gradients(const Function& function, std::vector<Tensor> inputs, GradCheckOptions options) {
  Tape tape;
  Tensor output = function(tape, inputs);
  Tensor seed = random_tensor(output.shape(), options.seed, 1.f, false);
  std::vector<float> weights = seed.to_vector();
  tape.backward(output, seed);

  std::ostringstream worst;
  double worst_excess = 0.0;
  for (size_t input = 0; input < inputs.size(); ++input) {
    Tensor& x = inputs[input];
    if (!x.requires_grad()) continue;
    std::vector<float> analytic = x.has_grad() ? x.grad().to_vector() : std::vector<float>(x.numel(), 0.f);
    float* values = x.data();
    for (int64_t i = 0; i < x.numel(); ++i) {
      float original = values[i];
      values[i] = original + options.step;
      double plus = evaluate(function, inputs, weights);
      values[i] = original - options.step;
      double minus = evaluate(function, inputs, weights);
      values[i] = original;
      double numeric = (plus - minus) / (2.0 * options.step);
      double error = std::fabs(numeric - analytic[i]);
      double allowed = options.absolute_tolerance +
                       options.relative_tolerance * std::max(std::fabs(numeric), std::fabs(double(analytic[i])));
      if (!(error <= allowed) && error - allowed >= worst_excess) {
        worst_excess = error - allowed;
        worst.str("");
        worst << "input " << input << " " << to_string(x.shape()) << " element " << i << ": analytic " << analytic[i]
              << " vs numeric " << numeric;
      }
    }
  }
  return worst.str();
}

}  // namespace attn::testing
