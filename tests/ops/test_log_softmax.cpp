#include <cmath>

#include <catch2/catch.hpp>

#include "grad_check.h"
#include "ops/log_softmax.h"

using namespace attn;
using attn::testing::check_gradients;
using attn::testing::random_tensor;

TEST_CASE("log_softmax equals x - logsumexp(x) in double", "[ops][log_softmax]") {
  Tape tape;
  Tensor x = random_tensor({3, 7}, 31, 2.f, false);
  std::vector<float> values = x.to_vector();
  std::vector<float> y = ops::log_softmax(tape, x).to_vector();
  for (int r = 0; r < 3; ++r) {
    double sum = 0.0;
    for (int j = 0; j < 7; ++j) sum += std::exp(double(values[r * 7 + j]));
    for (int j = 0; j < 7; ++j) CHECK(y[r * 7 + j] == Approx(values[r * 7 + j] - std::log(sum)).margin(1e-5));
  }
}

TEST_CASE("log_softmax stays finite for large logits", "[ops][log_softmax]") {
  Tape tape;
  Tensor x = Tensor::from_vector({1, 3}, {1000.f, 0.f, -1000.f});
  std::vector<float> y = ops::log_softmax(tape, x).to_vector();
  CHECK(y[0] == Approx(0.f).margin(1e-5));  // oneDNN's jit log is accurate to ~1e-6, not exact
  CHECK(y[1] == Approx(-1000.f));
  CHECK(std::isfinite(y[2]));
}

TEST_CASE("log_softmax gradients match finite differences", "[ops][log_softmax][grad]") {
  Tensor x = random_tensor({2, 3, 7}, 32);
  auto f = [](Tape& tape, const std::vector<Tensor>& in) { return ops::log_softmax(tape, in[0]); };
  CHECK(check_gradients(f, {x}) == "");
}
