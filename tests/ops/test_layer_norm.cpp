#include <cmath>

#include <catch2/catch.hpp>

#include "grad_check.h"
#include "ops/layer_norm.h"

using namespace attn;
using attn::testing::check_gradients;
using attn::testing::random_tensor;

namespace {

// gamma * (x - mean) / sqrt(var + eps) + beta per row of width D, in double.
std::vector<double> reference_layer_norm(const Tensor& x, const Tensor& gamma, const Tensor& beta, double eps) {
  int64_t width = x.dim(-1), rows = x.numel() / width;
  std::vector<float> v = x.to_vector(), g = gamma.to_vector(), b = beta.to_vector();
  std::vector<double> y(v.size());
  for (int64_t r = 0; r < rows; ++r) {
    double mean = 0.0, var = 0.0;
    for (int64_t j = 0; j < width; ++j) mean += v[r * width + j] / double(width);
    for (int64_t j = 0; j < width; ++j) var += std::pow(v[r * width + j] - mean, 2) / double(width);
    for (int64_t j = 0; j < width; ++j)
      y[r * width + j] = g[j] * (v[r * width + j] - mean) / std::sqrt(var + eps) + b[j];
  }
  return y;
}

}  // namespace

TEST_CASE("layer_norm with gamma 1 and beta 0 gives rows of mean 0 and variance 1", "[ops][layer_norm]") {
  Tape tape;
  const int64_t width = 16;
  Tensor x = random_tensor({3, width}, 41, 3.f, false);
  for (int64_t j = 0; j < width; ++j) x.data()[j] += 5.f;  // an offset row
  std::vector<float> y = ops::layer_norm(tape, x, Tensor::full({width}, 1.f), Tensor::zeros({width})).to_vector();
  for (int r = 0; r < 3; ++r) {
    double mean = 0.0, var = 0.0;
    for (int j = 0; j < width; ++j) mean += y[r * width + j] / double(width);
    for (int j = 0; j < width; ++j) var += std::pow(y[r * width + j] - mean, 2) / double(width);
    CHECK(std::fabs(mean) < 1e-5);
    CHECK(var == Approx(1.0).epsilon(1e-3));  // epsilon 1e-5 shrinks it a little
  }
}

TEST_CASE("layer_norm matches a double reference in training and inference", "[ops][layer_norm]") {
  Tensor x = random_tensor({2, 3, 8}, 42, 2.f, false);
  Tensor gamma = random_tensor({8}, 43);  // requires grad: the training path
  Tensor beta = random_tensor({8}, 44);
  std::vector<double> expected = reference_layer_norm(x, gamma, beta, 1e-5);
  Tape tape;
  std::vector<float> training = ops::layer_norm(tape, x, gamma, beta).to_vector();
  CHECK(tape.size() == 1);
  NoGradScope no_grad(tape);
  std::vector<float> inference = ops::layer_norm(tape, x, gamma, beta).to_vector();
  CHECK(tape.size() == 1);
  for (size_t i = 0; i < expected.size(); ++i) {
    CHECK(training[i] == Approx(expected[i]).margin(1e-5));
    CHECK(inference[i] == Approx(expected[i]).margin(1e-5));
  }
}

TEST_CASE("layer_norm gradients of x and gamma and beta match finite differences", "[ops][layer_norm][grad]") {
  Tensor x = random_tensor({2, 3, 5}, 45);
  Tensor gamma = random_tensor({5}, 46);
  Tensor beta = random_tensor({5}, 47);
  auto f = [](Tape& tape, const std::vector<Tensor>& in) { return ops::layer_norm(tape, in[0], in[1], in[2]); };
  CHECK(check_gradients(f, {x, gamma, beta}) == "");
}

TEST_CASE("layer_norm backward adds into existing gradients", "[ops][layer_norm][grad]") {
  Tensor x = random_tensor({3, 4}, 48);
  Tensor gamma = random_tensor({4}, 49);
  Tensor beta = random_tensor({4}, 50);
  Tensor seed = random_tensor({3, 4}, 51, 1.f, false);
  Tape tape;
  tape.backward(ops::layer_norm(tape, x, gamma, beta), seed);
  std::vector<std::vector<float>> fresh{x.grad().to_vector(), gamma.grad().to_vector(), beta.grad().to_vector()};
  tape.backward(ops::layer_norm(tape, x, gamma, beta), seed);
  std::vector<std::vector<float>> twice{x.grad().to_vector(), gamma.grad().to_vector(), beta.grad().to_vector()};
  for (size_t t = 0; t < fresh.size(); ++t)
    for (size_t i = 0; i < fresh[t].size(); ++i) CHECK(twice[t][i] == Approx(2.f * fresh[t][i]).margin(1e-6));
}

TEST_CASE("layer_norm rejects gamma of the wrong width", "[ops][layer_norm]") {
  Tape tape;
  Tensor x = random_tensor({2, 5}, 52, 1.f, false);
  CHECK_THROWS_WITH(ops::layer_norm(tape, x, Tensor::full({4}, 1.f), Tensor::zeros({5})),
                    Catch::Contains("(4)") && Catch::Contains("(2, 5)"));
}
