#include <catch2/catch.hpp>

#include "grad_check.h"
#include "ops/scale.h"

using namespace attn;
using attn::testing::check_gradients;
using attn::testing::random_tensor;

TEST_CASE("scale forward values", "[ops][scale]") {
  Tape tape;
  Tensor x = Tensor::from_vector({2, 2}, {1.f, -2.f, 0.25f, 4.f});
  CHECK(ops::scale(tape, x, 3.f).to_vector() == std::vector<float>{3.f, -6.f, 0.75f, 12.f});
}

TEST_CASE("scale gradients match finite differences", "[ops][scale][grad]") {
  Tensor x = random_tensor({3, 4}, 21);
  auto f = [](Tape& tape, const std::vector<Tensor>& in) { return ops::scale(tape, in[0], -2.5f); };
  CHECK(check_gradients(f, {x}) == "");
}
