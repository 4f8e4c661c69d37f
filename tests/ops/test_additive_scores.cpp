#include <cmath>

#include <catch2/catch.hpp>

#include "grad_check.h"
#include "ops/additive_scores.h"

using namespace attn;
using attn::testing::check_gradients;
using attn::testing::random_tensor;

TEST_CASE("additive_scores is v . tanh(key + query) at every position", "[ops][additive_scores]") {
  Tape tape;
  Tensor keys = Tensor::from_vector({1, 2, 2}, {0.5f, -1.f, 2.f, 0.f});  // (B, S, A)
  Tensor query = Tensor::from_vector({1, 2}, {0.25f, 0.5f});             // (B, A)
  Tensor v = Tensor::from_vector({1, 2}, {2.f, -3.f});                   // (1, A), a Linear's weight
  std::vector<float> scores = ops::additive_scores(tape, keys, query, v).to_vector();
  REQUIRE(scores.size() == 2);
  CHECK(scores[0] == Approx(2 * std::tanh(0.75) - 3 * std::tanh(-0.5)).margin(1e-6));
  CHECK(scores[1] == Approx(2 * std::tanh(2.25) - 3 * std::tanh(0.5)).margin(1e-6));
}

TEST_CASE("additive_scores saturates without NaN far from zero", "[ops][additive_scores]") {
  Tape tape;
  Tensor keys = Tensor::from_vector({1, 2, 1}, {200.f, -200.f});
  Tensor scores = ops::additive_scores(tape, keys, Tensor::zeros({1, 1}), Tensor::full({1}, 1.f));
  CHECK(scores.to_vector() == std::vector<float>{1.f, -1.f});
}

TEST_CASE("additive_scores rejects operands that do not fit and names their shapes", "[ops][additive_scores]") {
  Tape tape;
  Tensor keys = Tensor::zeros({2, 3, 4});
  CHECK_THROWS_WITH(ops::additive_scores(tape, keys, Tensor::zeros({3, 4}), Tensor::zeros({4})),
                    Catch::Contains("(3, 4)") && Catch::Contains("(2, 3, 4)"));
  CHECK_THROWS_AS(ops::additive_scores(tape, keys, Tensor::zeros({2, 4}), Tensor::zeros({3})), Error);
}

TEST_CASE("additive_scores gradients match finite differences", "[ops][additive_scores][grad]") {
  Tensor keys = random_tensor({2, 5, 3}, 31);
  Tensor query = random_tensor({2, 3}, 32);
  Tensor v = random_tensor({1, 3}, 33);
  auto f = [](Tape& tape, const std::vector<Tensor>& x) { return ops::additive_scores(tape, x[0], x[1], x[2]); };
  CHECK(check_gradients(f, {keys, query, v}) == "");
}
