#include <catch2/catch.hpp>

#include "grad_check.h"
#include "ops/add.h"

using namespace attn;
using attn::testing::check_gradients;
using attn::testing::random_tensor;

TEST_CASE("add forward computes alpha a + beta b", "[ops][add]") {
  Tape tape;
  Tensor a = Tensor::from_vector({2, 2}, {1.f, 2.f, 3.f, 4.f});
  Tensor b = Tensor::from_vector({2, 2}, {10.f, 20.f, 30.f, 40.f});
  CHECK(ops::add(tape, a, b).to_vector() == std::vector<float>{11.f, 22.f, 33.f, 44.f});
  CHECK(ops::add(tape, a, b, 2.f, 0.5f).to_vector() == std::vector<float>{7.f, 14.f, 21.f, 28.f});
  CHECK(ops::sub(tape, b, a).to_vector() == std::vector<float>{9.f, 18.f, 27.f, 36.f});
}

TEST_CASE("add repeats a trailing-shape b over a's leading axes", "[ops][add]") {
  Tape tape;
  Tensor a = Tensor::from_vector({2, 2, 3}, {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11});  // (B, T, D)
  Tensor b = Tensor::from_vector({2, 3}, {100, 200, 300, 400, 500, 600});             // (T, D)
  std::vector<float> expected{100, 201, 302, 403, 504, 605, 106, 207, 308, 409, 510, 611};
  CHECK(ops::add(tape, a, b).to_vector() == expected);
  Tensor row = Tensor::from_vector({3}, {1, 2, 3});  // (D): repeats over B and T
  CHECK(ops::add(tape, a, row).to_vector() == std::vector<float>{1, 3, 5, 4, 6, 8, 7, 9, 11, 10, 12, 14});
}

TEST_CASE("add rejects shapes that are not a's shape or its trailing dims", "[ops][add]") {
  Tape tape;
  Tensor a = Tensor::zeros({2, 3, 4});
  CHECK_THROWS_WITH(ops::add(tape, a, Tensor::zeros({2, 3})),
                    Catch::Contains("(2, 3)") && Catch::Contains("(2, 3, 4)"));
  CHECK_THROWS_AS(ops::add(tape, a, Tensor::zeros({1, 2, 3, 4})), Error);
  CHECK_THROWS_AS(ops::sub(tape, a, Tensor::zeros({4, 3})), Error);
}

TEST_CASE("add gradients match finite differences", "[ops][add][grad]") {
  Tensor a = random_tensor({2, 3, 4}, 1);
  Tensor b = random_tensor({2, 3, 4}, 2);
  auto f = [](Tape& tape, const std::vector<Tensor>& x) { return ops::add(tape, x[0], x[1], 0.7f, -1.3f); };
  CHECK(check_gradients(f, {a, b}) == "");
}

TEST_CASE("add with a broadcast b sums b's gradient over the repeats", "[ops][add][grad]") {
  Tensor a = random_tensor({2, 3, 4}, 3);
  Tensor b = random_tensor({3, 4}, 4);
  auto f = [](Tape& tape, const std::vector<Tensor>& x) { return ops::add(tape, x[0], x[1], 1.5f, 0.5f); };
  CHECK(check_gradients(f, {a, b}) == "");
}

TEST_CASE("sub gradients match finite differences", "[ops][add][grad]") {
  Tensor a = random_tensor({3, 5}, 5);
  Tensor b = random_tensor({5}, 6);
  auto f = [](Tape& tape, const std::vector<Tensor>& x) { return ops::sub(tape, x[0], x[1]); };
  CHECK(check_gradients(f, {a, b}) == "");
}

TEST_CASE("a tensor used twice accumulates both gradients", "[ops][add][grad]") {
  Tape tape;
  Tensor x = random_tensor({2, 3}, 7);
  Tensor y = ops::add(tape, x, x);
  tape.backward(y, Tensor::full({2, 3}, 1.f));
  for (float g : x.grad().to_vector()) CHECK(g == 2.f);
}
