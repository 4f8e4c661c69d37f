#include <cmath>

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
