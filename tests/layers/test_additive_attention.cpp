#include <cmath>

#include <catch2/catch.hpp>

#include "grad_check.h"
#include "layers/additive_attention.h"
#include "ops/masks.h"

using namespace attn;
using attn::testing::check_gradients;
using attn::testing::random_tensor;

namespace {

// Query width 3, key width 4, attention width 5.
struct TestAttention {
  ParameterStore store{6};
  layers::AdditiveAttention attention{store, "attention", 3, 4, 5};
  TestAttention() { store.finalize(); }

  layers::AdditiveAttentionOutput operator()(Tape& tape, const Tensor& query, const Tensor& states,
                                             const std::vector<int32_t>& lengths) const {
    return attention(tape, query, attention.project_keys(tape, states), states,
                     ops::key_padding_mask(lengths, states.dim(1)), Precision::f32);
  }
};

}  // namespace

TEST_CASE("additive attention rows sum to 1 and padded positions get exactly 0", "[layers][additive_attention]") {
  TestAttention test;
  Tape tape;
  Tensor states = random_tensor({2, 5, 4}, 51, 1.f, false);  // (B, S, K)
  Tensor query = random_tensor({2, 3}, 52, 1.f, false);      // (B, Q)
  layers::AdditiveAttentionOutput out = test(tape, query, states, {3, 5});
  REQUIRE(out.weights.shape() == Shape{2, 1, 5});
  REQUIRE(out.context.shape() == Shape{2, 4});
  std::vector<float> weights = out.weights.to_vector();
  std::vector<float> values = states.to_vector(), context = out.context.to_vector();
  std::vector<int> lengths{3, 5};
  for (int b = 0; b < 2; ++b) {
    double sum = 0.0;
    for (int s = 0; s < 5; ++s) {
      sum += weights[b * 5 + s];
      if (s >= lengths[b])
        CHECK(weights[b * 5 + s] == 0.f);
      else
        CHECK(weights[b * 5 + s] > 0.f);
    }
    CHECK(sum == Approx(1.0).margin(1e-6));
    for (int k = 0; k < 4; ++k) {  // c = sum_i a_i h_i
      double expected = 0.0;
      for (int s = 0; s < 5; ++s) expected += double(weights[b * 5 + s]) * values[(b * 5 + s) * 4 + k];
      CHECK(context[b * 4 + k] == Approx(expected).margin(1e-5));
    }
  }
}

TEST_CASE("additive attention ignores the states at padded positions", "[layers][additive_attention]") {
  TestAttention test;
  Tape tape;
  Tensor query = random_tensor({1, 3}, 53, 1.f, false);
  Tensor states = random_tensor({1, 4, 4}, 54, 1.f, false);
  Tensor changed = states.clone();
  for (int k = 0; k < 4; ++k) changed.data()[3 * 4 + k] += 10.f;  // position 3 is padding
  std::vector<float> a = test(tape, query, states, {3}).context.to_vector();
  std::vector<float> b = test(tape, query, changed, {3}).context.to_vector();
  for (size_t i = 0; i < a.size(); ++i) CHECK(a[i] == b[i]);
}

TEST_CASE("additive attention gradients match finite differences", "[layers][additive_attention][grad]") {
  TestAttention test;
  std::vector<Tensor> inputs{random_tensor({2, 3}, 55), random_tensor({2, 4, 4}, 56)};
  for (const auto& parameter : test.store.parameters()) inputs.push_back(parameter.tensor);
  SECTION("through the context") {
    auto f = [&test](Tape& tape, const std::vector<Tensor>& x) { return test(tape, x[0], x[1], {2, 4}).context; };
    CHECK(check_gradients(f, inputs) == "");
  }
  SECTION("through the weights") {
    auto f = [&test](Tape& tape, const std::vector<Tensor>& x) { return test(tape, x[0], x[1], {2, 4}).weights; };
    CHECK(check_gradients(f, inputs) == "");
  }
}

TEST_CASE("additive attention rejects keys and states of different lengths", "[layers][additive_attention]") {
  TestAttention test;
  Tape tape;
  Tensor keys = Tensor::zeros({2, 4, 5});
  CHECK_THROWS_WITH(
      test.attention(tape, Tensor::zeros({2, 3}), keys, Tensor::zeros({2, 3, 4}), Tensor(), Precision::f32),
      Catch::Contains("(2, 4, 5)") && Catch::Contains("(2, 3, 4)"));
}
