// int8 decoding's linear against the f32 one, within the bound that the two quantisation
// steps give (ops/quantized_linear.h), and bf16 decoding's where the CPU has bf16 matmuls.
#include <cmath>

#include <catch2/catch.hpp>

#include "core/matmul_weight.h"
#include "grad_check.h"
#include "ops/gemm.h"
#include "ops/linear.h"
#include "ops/quantized_linear.h"

using namespace attn;
using attn::testing::random_tensor;

namespace {

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

TEST_CASE("int8 and bf16 weights are for decoding: a tape that wants gradients is refused", "[ops][quantize]") {
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
  if (!ops::bf16_gemm_supported()) {
    WARN("skipped: oneDNN has no bf16 matmul on this CPU (it needs AVX-512)");
    return;
  }
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
