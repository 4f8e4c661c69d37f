#include <algorithm>
#include <cmath>
#include <vector>

#include <catch2/catch.hpp>

#include "core/fast_math.h"
#include "ops/masks.h"

TEST_CASE("fast_exp matches std::exp to 1e-6 relative over the f32 range", "[core][fast_math]") {
  double worst = 0;
  for (float x = -87.f; x <= 88.f; x += 0.0137f) {
    double expected = std::exp(double(x));
    worst = std::max(worst, std::fabs(attn::fast_exp(x) - expected) / expected);
  }
  CHECK(worst < 1e-6);
  CHECK(attn::fast_exp(0.f) == 1.f);
}

TEST_CASE("fast_exp of a masked score is exactly zero", "[core][fast_math]") {
  CHECK(attn::fast_exp(attn::ops::kMaskValue) == 0.f);
  CHECK(attn::fast_exp(-100.f) == 0.f);
  CHECK(std::isfinite(attn::fast_exp(1000.f)));
}

TEST_CASE("fast_exp of NaN is NaN and of infinities 0 and the largest value", "[core][fast_math]") {
  CHECK(std::isnan(attn::fast_exp(std::nanf(""))));
  CHECK(attn::fast_exp(-INFINITY) == 0.f);
  CHECK(attn::fast_exp(INFINITY) == attn::fast_exp(88.3762626647949f));
}

// The same special cases inside a loop the compiler vectorises, as softmax and cross-entropy
// use it: the lanes must keep the scalar rules (NaN stays NaN, masked scores give exactly 0).
TEST_CASE("fast_exp keeps its special cases in a vectorised loop", "[core][fast_math]") {
  std::vector<float> x = {0.f,           -1.5f,  attn::ops::kMaskValue,
                          std::nanf(""), 2.f,    -INFINITY,
                          INFINITY,      -87.f,  -88.f,
                          88.f,          1000.f, -100.f,
                          0.5f,          -0.25f, 3.f,
                          -20.f,         7.f};
  std::vector<float> y(x.size());
  const float* in = x.data();
  float* out = y.data();
  const int64_t n = static_cast<int64_t>(x.size());
#pragma omp simd
  for (int64_t i = 0; i < n; ++i) out[i] = attn::fast_exp(in[i]);
  for (size_t i = 0; i < x.size(); ++i) {
    INFO("x = " << x[i]);
    if (std::isnan(x[i])) {
      CHECK(std::isnan(y[i]));
    } else if (x[i] < -87.3365447504f) {
      CHECK(y[i] == 0.f);
    } else {
      double expected = std::exp(double(std::min(x[i], 88.3762626647949f)));
      CHECK(std::fabs(y[i] - expected) <= 1e-6 * expected);
    }
  }
}
