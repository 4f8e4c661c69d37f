// The GRU's own equations. What every recurrent cell must do (projection of a whole sequence,
// gradients, shape checks, masked updates) is in test_recurrent_cell.cpp.
#include <cmath>

#include <catch2/catch.hpp>

#include "grad_check.h"
#include "layers/gru_cell.h"
#include "random_biases.h"

using namespace attn;
using attn::testing::random_tensor;

namespace {

// The GRU equations of gru_cell.h in plain loops, for x (B, I) and h (B, H).
std::vector<float> reference_step(const ParameterStore& store, const Tensor& x, const Tensor& h) {
  std::vector<float> wi = store.get("gru.input.weight").to_vector(), bi = store.get("gru.input.bias").to_vector();
  std::vector<float> wh = store.get("gru.hidden.weight").to_vector(), bh = store.get("gru.hidden.bias").to_vector();
  std::vector<float> xs = x.to_vector(), hs = h.to_vector();
  int64_t rows = x.dim(0), in = x.dim(1), width = h.dim(1);
  auto project = [&](const std::vector<float>& w, const std::vector<float>& b, const std::vector<float>& v, int64_t k,
                     int64_t row, int64_t unit) {
    double sum = b[unit];
    for (int64_t j = 0; j < k; ++j) sum += double(w[unit * k + j]) * v[row * k + j];
    return sum;
  };
  auto sigmoid = [](double v) { return 1.0 / (1.0 + std::exp(-v)); };
  std::vector<float> result(rows * width);
  for (int64_t b = 0; b < rows; ++b)
    for (int64_t u = 0; u < width; ++u) {
      double r = sigmoid(project(wi, bi, xs, in, b, u) + project(wh, bh, hs, width, b, u));
      double z = sigmoid(project(wi, bi, xs, in, b, width + u) + project(wh, bh, hs, width, b, width + u));
      double g_n = project(wh, bh, hs, width, b, 2 * width + u);
      double n = std::tanh(project(wi, bi, xs, in, b, 2 * width + u) + r * g_n);
      result[b * width + u] = float((1 - z) * n + z * hs[b * width + u]);
    }
  return result;
}

}  // namespace

TEST_CASE("gru cell step follows the GRU equations - with no memory cell", "[layers][gru]") {
  ParameterStore store(5);
  layers::GruCell cell(store, "gru", 3, 4);
  store.finalize();
  attn::testing::randomize_biases(store, 41);  // so the test also sees b_hn inside r * (.)
  Tensor x = random_tensor({2, 3}, 31, 1.f, false);
  Tensor h = random_tensor({2, 4}, 32, 0.5f, false);
  Tape tape;
  layers::RecurrentState next = cell(tape, x, cell.initial_state(h));
  CHECK_FALSE(cell.has_memory_cell());
  CHECK_FALSE(next.c.defined());
  std::vector<float> got = next.h.to_vector();
  std::vector<float> expected = reference_step(store, x, h);
  REQUIRE(got.size() == expected.size());
  for (size_t i = 0; i < got.size(); ++i) CHECK(got[i] == Approx(expected[i]).margin(1e-5));
}
