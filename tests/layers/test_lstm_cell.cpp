// The LSTM's own equations. What every recurrent cell must do (projection of a whole sequence,
// finite-difference gradients, shape checks, masked updates) is in test_recurrent_cell.cpp,
// which runs on the LSTM too.
#include <cmath>

#include <catch2/catch.hpp>

#include "grad_check.h"
#include "layers/lstm_cell.h"
#include "random_biases.h"

using namespace attn;
using attn::testing::random_tensor;

namespace {

// The LSTM equations of lstm_cell.h in plain loops, for x (B, I), h and c (B, H): {h', c'}.
std::pair<std::vector<float>, std::vector<float>> reference_step(const ParameterStore& store, const Tensor& x,
                                                                 const Tensor& h, const Tensor& c) {
  std::vector<float> wi = store.get("lstm.input.weight").to_vector(), bi = store.get("lstm.input.bias").to_vector();
  std::vector<float> wh = store.get("lstm.hidden.weight").to_vector(), bh = store.get("lstm.hidden.bias").to_vector();
  std::vector<float> xs = x.to_vector(), hs = h.to_vector(), cs = c.to_vector();
  int64_t rows = x.dim(0), in = x.dim(1), width = h.dim(1);
  // Gate block `gate` (0 i, 1 f, 2 g, 3 o) of unit u before its nonlinearity.
  auto preactivation = [&](int64_t row, int64_t gate, int64_t u) {
    int64_t unit = gate * width + u;
    double sum = double(bi[unit]) + bh[unit];
    for (int64_t j = 0; j < in; ++j) sum += double(wi[unit * in + j]) * xs[row * in + j];
    for (int64_t j = 0; j < width; ++j) sum += double(wh[unit * width + j]) * hs[row * width + j];
    return sum;
  };
  auto sigmoid = [](double v) { return 1.0 / (1.0 + std::exp(-v)); };
  std::vector<float> h_next(rows * width), c_next(rows * width);
  for (int64_t b = 0; b < rows; ++b)
    for (int64_t u = 0; u < width; ++u) {
      double i = sigmoid(preactivation(b, 0, u)), f = sigmoid(preactivation(b, 1, u));
      double g = std::tanh(preactivation(b, 2, u)), o = sigmoid(preactivation(b, 3, u));
      double cell = f * cs[b * width + u] + i * g;
      c_next[b * width + u] = float(cell);
      h_next[b * width + u] = float(o * std::tanh(cell));
    }
  return {h_next, c_next};
}

}  // namespace

TEST_CASE("lstm cell step follows the LSTM equations (gates i - f - g - o)", "[layers][lstm]") {
  ParameterStore store(6);
  layers::LstmCell cell(store, "lstm", 3, 4);
  store.finalize();
  attn::testing::randomize_biases(store, 51);  // distinct per gate: a swapped gate block cannot pass
  Tensor x = random_tensor({2, 3}, 53, 1.f, false);
  Tensor h = random_tensor({2, 4}, 54, 0.5f, false);
  Tensor c = random_tensor({2, 4}, 55, 1.f, false);
  Tape tape;
  layers::RecurrentState next = cell(tape, x, {h, c});
  auto [h_expected, c_expected] = reference_step(store, x, h, c);
  std::vector<float> h_got = next.h.to_vector(), c_got = next.c.to_vector();
  REQUIRE(h_got.size() == h_expected.size());
  REQUIRE(c_got.size() == c_expected.size());
  for (size_t i = 0; i < h_got.size(); ++i) {
    CHECK(h_got[i] == Approx(h_expected[i]).margin(1e-5));
    CHECK(c_got[i] == Approx(c_expected[i]).margin(1e-5));
  }
}

TEST_CASE("lstm cell starts with a zero memory cell and needs one at every step", "[layers][lstm]") {
  ParameterStore store(6);
  layers::LstmCell cell(store, "lstm", 3, 4);
  store.finalize();
  CHECK(cell.has_memory_cell());
  layers::RecurrentState start = cell.initial_state(random_tensor({2, 4}, 56, 1.f, false));
  REQUIRE(start.c.defined());
  CHECK(start.c.shape() == Shape{2, 4});
  for (float value : start.c.to_vector()) CHECK(value == 0.f);
  Tape tape;
  CHECK_THROWS_WITH(cell(tape, Tensor::zeros({2, 3}), {Tensor::zeros({2, 4}), Tensor()}),
                    Catch::Contains("lstm step") && Catch::Contains("memory cell"));
}
