// int8 decoding's linear against the f32 one, within the bound that the two quantisation
// steps give (ops/quantized_linear.h), and bf16's (decoding and training) where the CPU has
// bf16 matmuls.
#include <cmath>
#include <vector>

#include <catch2/catch.hpp>

#include "bf16_support.h"
#include "core/dtype.h"
#include "core/matmul_weight.h"
#include "grad_check.h"
#include "ops/gemm.h"
#include "ops/linear.h"
#include "ops/quantized_linear.h"

using namespace attn;
using attn::testing::random_tensor;

namespace {

// The value bf16 keeps of v (round to nearest even), back in f32.
double rounded(float v) { return bf16_to_f32(f32_to_bf16(v)); }

// a (M, K) b (K, N) in double on bf16-rounded operands: what a bf16 matmul with f32
// accumulation computes, up to the order of its f32 sums.
std::vector<double> rounded_product(const std::vector<float>& a, const std::vector<float>& b, int64_t m, int64_t k,
                                    int64_t n) {
  std::vector<double> c(size_t(m * n), 0.0);
  for (int64_t i = 0; i < m; ++i)
    for (int64_t j = 0; j < n; ++j)
      for (int64_t l = 0; l < k; ++l)
        c[size_t(i * n + j)] += rounded(a[size_t(i * k + l)]) * rounded(b[size_t(l * n + j)]);
  return c;
}

std::vector<float> transposed(const std::vector<float>& a, int64_t rows, int64_t cols) {
  std::vector<float> t(a.size());
  for (int64_t i = 0; i < rows; ++i)
    for (int64_t j = 0; j < cols; ++j) t[size_t(j * rows + i)] = a[size_t(i * cols + j)];
  return t;
}

void check_close(const std::vector<float>& actual, const std::vector<double>& expected) {
  REQUIRE(actual.size() == expected.size());
  for (size_t i = 0; i < actual.size(); ++i)
    CHECK(std::fabs(actual[i] - expected[i]) <= 1e-4 * (1 + std::fabs(expected[i])));
}

MatmulWeight weight_in(const Tensor& f32, Precision precision) {
  MatmulWeight weight;
  weight.f32 = f32;
  weight.prepare(precision);
  return weight;
}

}  // namespace

TEST_CASE("int8 linear equals the f32 one within the quantisation bound with bias and leading dims",
          "[ops][quantize]") {
  const int64_t rows = 6, inner = 96, cols = 40;
  Tensor x = random_tensor({2, 3, inner}, 11, 2.f, false);
  x.data()[7] = 25.f;  // an outlier: its row's scale grows, the others' do not
  Tensor w = random_tensor({cols, inner}, 12, 0.3f, false);
  Tensor bias = random_tensor({cols}, 13, 1.f, false);
  Tape tape;
  NoGradScope no_grad(tape);
  std::vector<float> expected = ops::linear(tape, x, w, bias).to_vector();
  MatmulWeight int8 = weight_in(w, Precision::int8);
  Tensor y = ops::linear(tape, x, int8, bias);
  REQUIRE(y.shape() == Shape{2, 3, cols});
  std::vector<float> actual = y.to_vector();

  // |x - xq| <= sx / 2 and |w - wq| <= sw / 2 per element, so
  // |x.w - xq.wq| <= sum_k |x_k| sw/2 + |w_k| sx/2 + sx sw / 4.
  const float* xs = x.data();
  const float* ws = w.data();
  const float* w_scales = int8.int8.scales.data();
  double worst_share = 0;
  for (int64_t i = 0; i < rows; ++i) {
    float x_max = 0;
    for (int64_t k = 0; k < inner; ++k) x_max = std::max(x_max, std::fabs(xs[i * inner + k]));
    const double x_scale = x_max / kActivationLevels;
    for (int64_t n = 0; n < cols; ++n) {
      double bound = 0;
      for (int64_t k = 0; k < inner; ++k)
        bound += std::fabs(xs[i * inner + k]) * w_scales[n] / 2 + std::fabs(ws[n * inner + k]) * x_scale / 2 +
                 x_scale * w_scales[n] / 4;
      const double error = std::fabs(actual[i * cols + n] - expected[i * cols + n]);
      INFO("row " << i << " column " << n);
      CHECK(error <= bound * 1.001 + 1e-5);
      worst_share = std::max(worst_share, error / bound);
    }
  }
  // The bound is reached only when every rounding goes the same way: typical errors are far below it.
  CHECK(worst_share < 0.5);
}

TEST_CASE("int8 weights are for decoding: a tape that wants gradients is refused", "[ops][quantize]") {
  Tensor x = random_tensor({2, 8}, 1, 1.f, true);
  MatmulWeight int8 = weight_in(random_tensor({4, 8}, 2, 1.f, false), Precision::int8);
  Tape tape;
  CHECK_THROWS_WITH(ops::linear(tape, x, int8, Tensor()), Catch::Contains("int8") && Catch::Contains("decoding"));
}

TEST_CASE("quantized_linear refuses an input that does not fit the weight", "[ops][quantize]") {
  QuantizedMatrix w = quantize_rows(Tensor::zeros({4, 8}));
  CHECK_THROWS_WITH(ops::quantized_linear(Tensor::zeros({2, 7}), w, Tensor()), Catch::Contains("does not fit"));
}

TEST_CASE("bf16 linear equals the f32 one within bf16 rounding where the CPU has bf16 matmuls", "[ops][quantize]") {
  ATTN_SKIP_UNLESS_BF16_MATMUL();
  const int64_t inner = 64, cols = 24;
  Tensor x = random_tensor({5, inner}, 21, 1.f, false);
  Tensor w = random_tensor({cols, inner}, 22, 0.5f, false);
  Tape tape;
  NoGradScope no_grad(tape);
  std::vector<float> expected = ops::linear(tape, x, w, Tensor()).to_vector();
  std::vector<float> actual = ops::linear(tape, x, weight_in(w, Precision::bf16), Tensor()).to_vector();
  // Each operand is off by at most 2^-9 relative: |error| <= 2^-8 sum_k |x_k w_k| (plus f32 sums).
  for (int64_t i = 0; i < 5; ++i)
    for (int64_t n = 0; n < cols; ++n) {
      double magnitude = 0;
      for (int64_t k = 0; k < inner; ++k) magnitude += std::fabs(x.data()[i * inner + k] * w.data()[n * inner + k]);
      CHECK(std::fabs(actual[i * cols + n] - expected[i * cols + n]) <= magnitude / 256 + 1e-5);
    }
}

TEST_CASE("bf16 training linear: y dx and dW are the products of the bf16-rounded operands - dW in the f32 parameter",
          "[ops][quantize][bf16]") {
  ATTN_SKIP_UNLESS_BF16_MATMUL();
  const int64_t rows = 6, inner = 40, cols = 24;
  Tensor x = random_tensor({2, 3, inner}, 31, 1.f, true);
  Tensor w = random_tensor({cols, inner}, 32, 0.5f, true);
  Tensor bias = random_tensor({cols}, 33, 1.f, true);
  Tensor dy = random_tensor({rows, cols}, 34, 1.f, false);
  MatmulWeight weight = weight_in(w, Precision::bf16);
  Tape tape;
  Tensor y = ops::linear(tape, x, weight, bias);  // (2, 3, cols)
  REQUIRE(y.shape() == Shape{2, 3, cols});
  tape.backward(y, dy.view(y.shape()));

  std::vector<float> xs = x.to_vector(), ws = w.to_vector(), dys = dy.to_vector();
  std::vector<double> expected_y = rounded_product(xs, transposed(ws, cols, inner), rows, inner, cols);
  for (int64_t i = 0; i < rows; ++i)
    for (int64_t n = 0; n < cols; ++n) expected_y[size_t(i * cols + n)] += bias.data()[n];
  check_close(y.to_vector(), expected_y);
  check_close(x.grad().to_vector(), rounded_product(dys, ws, rows, cols, inner));                          // dy W
  check_close(w.grad().to_vector(), rounded_product(transposed(dys, rows, cols), xs, cols, rows, inner));  // dy^T x
  std::vector<double> expected_db(size_t(cols), 0.0);
  for (int64_t i = 0; i < rows; ++i)
    for (int64_t n = 0; n < cols; ++n) expected_db[size_t(n)] += dys[size_t(i * cols + n)];  // f32, not rounded
  check_close(bias.grad().to_vector(), expected_db);
}

TEST_CASE("a bf16 matmul weight prepared again follows the changed f32 values in the same buffer",
          "[ops][quantize][bf16]") {
  Tensor w = random_tensor({4, 8}, 41, 1.f, false);
  MatmulWeight weight = weight_in(w, Precision::bf16);
  const void* buffer = weight.bf16.raw();
  w.fill(0.3f);
  CHECK(bf16_to_f32(weight.bf16.data_bf16()[5]) != Approx(0.3f).epsilon(0.01));  // a stale copy until prepared
  weight.prepare(Precision::bf16);
  CHECK(weight.bf16.raw() == buffer);
  for (int64_t i = 0; i < w.numel(); ++i) CHECK(weight.bf16.data_bf16()[i] == f32_to_bf16(0.3f));
}
