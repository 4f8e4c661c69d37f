#include <catch2/catch.hpp>

#include "grad_check.h"
#include "ops/heads.h"

using namespace attn;
using attn::testing::check_gradients;
using attn::testing::random_tensor;

TEST_CASE("split_heads places x(b, t, h * Dh + e) at y(b, h, t, e)", "[ops][heads]") {
  Tape tape;
  const int64_t B = 2, T = 3, H = 2, Dh = 3, D = H * Dh;
  Tensor x = random_tensor({B, T, D}, 1, 1.f, false);
  Tensor y = ops::split_heads(tape, x, H);
  REQUIRE(y.shape() == Shape{B, H, T, Dh});
  auto in = x.to_vector();
  auto out = y.to_vector();
  for (int64_t b = 0; b < B; ++b)
    for (int64_t h = 0; h < H; ++h)
      for (int64_t t = 0; t < T; ++t)
        for (int64_t e = 0; e < Dh; ++e) CHECK(out[((b * H + h) * T + t) * Dh + e] == in[(b * T + t) * D + h * Dh + e]);
}

TEST_CASE("split_heads then merge_heads round-trips exactly", "[ops][heads]") {
  Tape tape;
  Tensor x = random_tensor({3, 5, 8}, 2, 1.f, false);
  Tensor y = ops::merge_heads(tape, ops::split_heads(tape, x, 4));
  REQUIRE(y.shape() == x.shape());
  CHECK(y.to_vector() == x.to_vector());
}

TEST_CASE("split_heads gradient matches finite differences", "[ops][heads][grad]") {
  Tensor x = random_tensor({2, 3, 6}, 3);
  auto f = [](Tape& tape, const std::vector<Tensor>& in) { return ops::split_heads(tape, in[0], 3); };
  CHECK(check_gradients(f, {x}) == "");
}

TEST_CASE("merge_heads gradient matches finite differences", "[ops][heads][grad]") {
  Tensor x = random_tensor({2, 2, 3, 4}, 4);
  auto f = [](Tape& tape, const std::vector<Tensor>& in) { return ops::merge_heads(tape, in[0]); };
  CHECK(check_gradients(f, {x}) == "");
}

TEST_CASE("head gradients accumulate into an existing gradient", "[ops][heads][grad]") {
  Tape tape;
  Tensor x = random_tensor({1, 2, 4}, 5);
  x.grad().fill(1.f);
  Tensor y = ops::split_heads(tape, x, 2);
  tape.backward(y, Tensor::full(y.shape(), 2.f));
  for (float g : x.grad().to_vector()) CHECK(g == 3.f);
}

TEST_CASE("split_heads rejects a width not divisible by the heads", "[ops][heads]") {
  Tape tape;
  Tensor x = Tensor::zeros({1, 2, 6});
  CHECK_THROWS_WITH(ops::split_heads(tape, x, 4), Catch::Contains("D=6") && Catch::Contains("H=4"));
}
