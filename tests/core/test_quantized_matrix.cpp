#include <cmath>

#include <catch2/catch.hpp>

#include "core/matmul_weight.h"
#include "core/parameter_store.h"
#include "core/quantized_matrix.h"
#include "grad_check.h"

using namespace attn;
using attn::testing::random_tensor;

TEST_CASE("quantize then dequantize is off by at most half a step (scale / 2) per element", "[core][quantize]") {
  const int levels = GENERATE(kWeightLevels, kActivationLevels);
  Tensor matrix = random_tensor({7, 33}, 4, 3.f, false);
  float* values = matrix.data();
  values[5] = 40.f;                                       // an outlier sets its row's scale
  for (int c = 0; c < 33; ++c) values[3 * 33 + c] = 0.f;  // an all-zero row
  QuantizedMatrix quantized = quantize_rows(matrix, levels);
  REQUIRE(quantized.values.dtype() == DType::s8);
  REQUIRE(quantized.scales.shape() == Shape{7});
  std::vector<float> restored = dequantize_rows(quantized).to_vector();
  const auto* q = static_cast<const int8_t*>(quantized.values.raw());
  for (int64_t r = 0; r < 7; ++r) {
    const float scale = quantized.scales.data()[r];
    float max_abs = 0.f;
    for (int c = 0; c < 33; ++c) max_abs = std::max(max_abs, std::fabs(values[r * 33 + c]));
    CHECK(scale == (max_abs > 0 ? max_abs / levels : 1.f));
    for (int64_t c = 0; c < 33; ++c) {
      INFO("row " << r << " column " << c);
      CHECK(std::abs(int(q[r * 33 + c])) <= levels);
      CHECK(std::fabs(restored[r * 33 + c] - values[r * 33 + c]) <= scale / 2 * (1 + 1e-5f));
    }
  }
  // A row's largest element is exact up to float rounding: it maps to +-levels.
  CHECK(q[5] == levels);
  for (int c = 0; c < 33; ++c) CHECK(restored[3 * 33 + c] == 0.f);
}

TEST_CASE("quantize_rows refuses what is not an f32 matrix or a level count outside 1..127", "[core][quantize]") {
  CHECK_THROWS_WITH(quantize_rows(Tensor::zeros({4})), Catch::Contains("matrix"));
  CHECK_THROWS_WITH(quantize_rows(Tensor::zeros({2, 2}), 128), Catch::Contains("levels"));
}

TEST_CASE("the store prepares every matmul weight once per precision and f32 drops the copies", "[core][quantize]") {
  ParameterStore store(1);
  store.add("a.weight", {4, 8}, init::normal(1.f));
  store.add("a.bias", {4}, init::zeros());
  auto weight = store.matmul_weight("a.weight");
  CHECK(store.matmul_weight("a.weight") == weight);  // one per name
  CHECK_THROWS_WITH(store.matmul_weight("a.bias"), Catch::Contains("not a matrix"));
  store.finalize();
  CHECK(weight->f32.data() == store.get("a.weight").data());  // follows finalize()'s rebind

  store.prepare_matmul_weights(Precision::int8);
  CHECK(store.matmul_precision() == Precision::int8);
  REQUIRE(weight->int8.defined());
  CHECK(weight->int8.values.shape() == Shape{4, 8});
  CHECK_FALSE(weight->bf16.defined());

  store.prepare_matmul_weights(Precision::bf16);
  REQUIRE(weight->bf16.defined());
  CHECK(weight->bf16.dtype() == DType::bf16);
  const auto* halves = static_cast<const uint16_t*>(weight->bf16.raw());
  for (int64_t i = 0; i < 32; ++i) CHECK(bf16_to_f32(halves[i]) == Approx(weight->f32.data()[i]).epsilon(1.f / 256));
  CHECK_FALSE(weight->int8.defined());

  store.prepare_matmul_weights(Precision::f32);
  CHECK(weight->precision == Precision::f32);
  CHECK_FALSE(weight->bf16.defined());
  CHECK_FALSE(weight->int8.defined());
}
