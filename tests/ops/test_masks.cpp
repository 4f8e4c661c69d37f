#include <catch2/catch.hpp>

#include "ops/masks.h"

using namespace attn;

TEST_CASE("causal_mask is kMaskValue exactly above the diagonal", "[ops][masks]") {
  Tensor mask = ops::causal_mask(3);
  REQUIRE(mask.shape() == Shape{1, 3, 3});
  const float m = ops::kMaskValue;
  std::vector<float> expected{0, m, m,  //
                              0, 0, m,  //
                              0, 0, 0};
  CHECK(mask.to_vector() == expected);
}

TEST_CASE("key_padding_mask masks the keys past each length", "[ops][masks]") {
  Tensor mask = ops::key_padding_mask({4, 2, 0}, 4);
  REQUIRE(mask.shape() == Shape{3, 1, 4});
  const float m = ops::kMaskValue;
  std::vector<float> expected{0, 0, 0, 0,  //
                              0, 0, m, m,  //
                              m, m, m, m};
  CHECK(mask.to_vector() == expected);
  CHECK_THROWS_WITH(ops::key_padding_mask({5}, 4), Catch::Contains("length 5"));
}
