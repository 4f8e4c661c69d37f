#include <catch2/catch.hpp>

#include "grad_check.h"
#include "ops/concat.h"

using namespace attn;
using attn::testing::check_gradients;
using attn::testing::random_tensor;

TEST_CASE("concat joins parts along the last axis", "[ops][concat]") {
  Tape tape;
  Tensor a = Tensor::from_vector({2, 1}, {1, 2});
  Tensor b = Tensor::from_vector({2, 2}, {3, 4, 5, 6});
  Tensor c = Tensor::from_vector({2, 3}, {7, 8, 9, 10, 11, 12});
  Tensor y = ops::concat(tape, {a, b, c});
  REQUIRE(y.shape() == Shape{2, 6});
  CHECK(y.to_vector() == std::vector<float>{1, 3, 4, 7, 8, 9, 2, 5, 6, 10, 11, 12});
}

TEST_CASE("concat of three parts: gradients match finite differences", "[ops][concat][grad]") {
  Tensor a = random_tensor({2, 3, 1}, 1);
  Tensor b = random_tensor({2, 3, 4}, 2);
  Tensor c = random_tensor({2, 3, 2}, 3);
  auto f = [](Tape& tape, const std::vector<Tensor>& in) { return ops::concat(tape, in); };
  CHECK(check_gradients(f, {a, b, c}) == "");
}

TEST_CASE("split then concat gives back the input exactly", "[ops][concat]") {
  Tape tape;
  Tensor x = random_tensor({3, 7}, 4, 1.f, false);
  auto parts = ops::split(tape, x, {2, 0, 5});
  REQUIRE(parts.size() == 3);
  CHECK(parts[0].shape() == Shape{3, 2});
  CHECK(parts[1].shape() == Shape{3, 0});
  CHECK(parts[2].shape() == Shape{3, 5});
  CHECK(parts[2].to_vector()[0] == x.to_vector()[2]);
  CHECK(ops::concat(tape, parts).to_vector() == x.to_vector());
}

TEST_CASE("split: every part's gradient matches finite differences", "[ops][concat][grad]") {
  for (int part = 0; part < 3; ++part) {
    DYNAMIC_SECTION("part " << part) {
      Tensor x = random_tensor({2, 2, 6}, 5);
      auto f = [part](Tape& tape, const std::vector<Tensor>& in) { return ops::split(tape, in[0], {1, 3, 2})[part]; };
      CHECK(check_gradients(f, {x}) == "");
    }
  }
}

TEST_CASE("split gradients of several used parts add into one input gradient", "[ops][concat][grad]") {
  Tensor x = random_tensor({2, 5}, 6);
  auto f = [](Tape& tape, const std::vector<Tensor>& in) {
    auto parts = ops::split(tape, in[0], {2, 3});
    return ops::concat(tape, {parts[1], parts[0], parts[1]});
  };
  CHECK(check_gradients(f, {x}) == "");
}

TEST_CASE("concat and split reject mismatched shapes naming them", "[ops][concat]") {
  Tape tape;
  Tensor a = Tensor::zeros({2, 3});
  Tensor b = Tensor::zeros({3, 3});
  CHECK_THROWS_WITH(ops::concat(tape, {a, b}), Catch::Contains("(2, 3)") && Catch::Contains("(3, 3)"));
  CHECK_THROWS_WITH(ops::split(tape, a, {1, 1}), Catch::Contains("sum to 2") && Catch::Contains("(2, 3)"));
}
