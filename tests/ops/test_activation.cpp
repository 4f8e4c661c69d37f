#include <cmath>

#include <catch2/catch.hpp>

#include "dnnl/context.h"
#include "grad_check.h"
#include "ops/activation.h"

using namespace attn;
using attn::testing::check_gradients;
using attn::testing::random_tensor;

namespace {

float reference(Activation kind, float x) {
  switch (kind) {
    case Activation::relu:
      return x > 0.f ? x : 0.f;
    case Activation::gelu:
      return 0.5f * x * (1.f + std::erf(x / std::sqrt(2.f)));
    case Activation::tanh:
      return std::tanh(x);
    case Activation::sigmoid:
      return 1.f / (1.f + std::exp(-x));
  }
  return 0.f;
}

// Inputs at least 0.2 away from 0, so relu's kink stays outside the finite-difference step.
Tensor away_from_zero(Tensor x) {
  float* values = x.data();
  for (int64_t i = 0; i < x.numel(); ++i) values[i] += values[i] >= 0.f ? 0.2f : -0.2f;
  return x;
}

const Activation kAll[] = {Activation::relu, Activation::gelu, Activation::tanh, Activation::sigmoid};

}  // namespace

TEST_CASE("activations forward equal their std:: reference", "[ops][activation]") {
  Tape tape;
  Tensor x = random_tensor({4, 7}, 31, 2.f, false);
  for (Activation kind : kAll) {
    DYNAMIC_SECTION(choice_name(kind)) {
      auto actual = ops::activation(tape, x, kind).to_vector();
      auto input = x.to_vector();
      for (size_t i = 0; i < input.size(); ++i) CHECK(actual[i] == Approx(reference(kind, input[i])).margin(1e-6));
    }
  }
}

TEST_CASE("activation wrappers call the named activation", "[ops][activation]") {
  Tape tape;
  Tensor x = Tensor::from_vector({4}, {-1.5f, -0.1f, 0.3f, 2.f});
  auto input = x.to_vector();
  auto check = [&](const Tensor& y, Activation kind) {
    auto values = y.to_vector();
    for (size_t i = 0; i < input.size(); ++i) CHECK(values[i] == Approx(reference(kind, input[i])).margin(1e-6));
  };
  check(ops::relu(tape, x), Activation::relu);
  check(ops::gelu(tape, x), Activation::gelu);
  check(ops::tanh(tape, x), Activation::tanh);
  check(ops::sigmoid(tape, x), Activation::sigmoid);
}

TEST_CASE("activation gradients match finite differences", "[ops][activation][grad]") {
  for (Activation kind : kAll) {
    DYNAMIC_SECTION(choice_name(kind)) {
      Tensor x = away_from_zero(random_tensor({3, 5}, 32));
      auto f = [kind](Tape& tape, const std::vector<Tensor>& in) { return ops::activation(tape, in[0], kind); };
      CHECK(check_gradients(f, {x}) == "");
    }
  }
}

TEST_CASE("activation backward adds to an existing gradient", "[ops][activation][grad]") {
  Tape tape;
  Tensor x = Tensor::from_vector({2}, {1.f, -1.f});
  x.set_requires_grad(true);
  Tensor y1 = ops::relu(tape, x);
  Tensor y2 = ops::tanh(tape, x);
  y2.grad().fill(1.f);                        // dy2 = 1, seeded before the one backward pass
  tape.backward(y1, Tensor::full({2}, 1.f));  // runs both closures, each adding into dx
  float dtanh = 1.f - std::tanh(1.f) * std::tanh(1.f);
  auto g = x.grad().to_vector();
  CHECK(g[0] == Approx(1.f + dtanh));
  CHECK(g[1] == Approx(dtanh));
}

TEST_CASE("activation reuses its cached primitives", "[ops][activation][cache]") {
  auto& cache = dnn::Context::get().cache();
  Tape tape;
  Tensor x = random_tensor({5, 9}, 33);
  tape.backward(ops::gelu(tape, x), Tensor::full({5, 9}, 1.f));  // may build forward + backward
  cache.reset_counters();
  tape.backward(ops::gelu(tape, x.view({9, 5})), Tensor::full({9, 5}, 1.f));  // same element count
  CHECK(cache.misses() == 0);
  CHECK(cache.hits() >= 2);
}
