#include <catch2/catch.hpp>

#include "grad_check.h"
#include "ops/mul.h"

using namespace attn;
using attn::testing::check_gradients;
using attn::testing::random_tensor;

TEST_CASE("mul forward is the elementwise product", "[ops][mul]") {
  Tape tape;
  Tensor a = Tensor::from_vector({2, 2}, {1.f, -2.f, 3.f, 0.5f});
  Tensor b = Tensor::from_vector({2, 2}, {4.f, 5.f, -6.f, 8.f});
  CHECK(ops::mul(tape, a, b).to_vector() == std::vector<float>{4.f, -10.f, -18.f, 4.f});
}

TEST_CASE("mul rejects different shapes and names both", "[ops][mul]") {
  Tape tape;
  CHECK_THROWS_WITH(ops::mul(tape, Tensor::zeros({2, 3}), Tensor::zeros({3})),
                    Catch::Contains("(2, 3)") && Catch::Contains("(3)"));
}

TEST_CASE("mul gradients match finite differences", "[ops][mul][grad]") {
  Tensor a = random_tensor({2, 3, 4}, 11);
  Tensor b = random_tensor({2, 3, 4}, 12);
  auto f = [](Tape& tape, const std::vector<Tensor>& x) { return ops::mul(tape, x[0], x[1]); };
  CHECK(check_gradients(f, {a, b}) == "");
}

TEST_CASE("mul of a tensor by itself gets gradient 2 x dy", "[ops][mul][grad]") {
  Tensor x = random_tensor({3, 4}, 13);
  auto f = [](Tape& tape, const std::vector<Tensor>& in) { return ops::mul(tape, in[0], in[0]); };
  CHECK(check_gradients(f, {x}) == "");
}

TEST_CASE("mul with one constant operand fills only the other gradient", "[ops][mul][grad]") {
  Tensor a = random_tensor({4, 3}, 14);
  Tensor b = random_tensor({4, 3}, 15, 1.f, false);
  auto f = [](Tape& tape, const std::vector<Tensor>& x) { return ops::mul(tape, x[0], x[1]); };
  CHECK(check_gradients(f, {a, b}) == "");
  CHECK_FALSE(b.has_grad());
}
