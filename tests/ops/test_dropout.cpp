#include <cmath>

#include <catch2/catch.hpp>

#include "core/dtype.h"
#include "grad_check.h"
#include "ops/dropout.h"

using namespace attn;
using attn::testing::check_gradients;
using attn::testing::random_tensor;

TEST_CASE("dropout in evaluation or with p = 0 returns the input itself", "[ops][dropout]") {
  Tape tape;
  Rng rng(5);
  Tensor x = random_tensor({3, 4}, 41);
  CHECK(ops::dropout(tape, x, 0.3f, false, rng).same_storage(x));
  CHECK(ops::dropout(tape, x, 0.f, true, rng).same_storage(x));
  CHECK(rng.counter() == 0);
  CHECK(tape.size() == 0);
}

TEST_CASE("dropout rejects probabilities outside 0 <= p < 1", "[ops][dropout]") {
  Tape tape;
  Rng rng(5);
  Tensor x = Tensor::zeros({4});
  CHECK_THROWS_WITH(ops::dropout(tape, x, 1.f, true, rng), Catch::Contains("[0, 1)"));
  CHECK_THROWS_AS(ops::dropout(tape, x, -0.1f, true, rng), Error);
}

TEST_CASE("training dropout keeps about 1 - p and scales kept values by 1 / (1 - p)", "[ops][dropout]") {
  Tape tape;
  Rng rng(6);
  const float p = 0.3f;
  Tensor x = random_tensor({100, 100}, 42, 1.f, false);
  Tensor y = ops::dropout(tape, x, p, true, rng);
  CHECK(rng.counter() >= 10000);  // the stream moved past every value the mask used
  CHECK(rng.counter() <= 10003);
  auto in = x.to_vector(), out = y.to_vector();
  int kept = 0;
  double sum_in = 0, sum_out = 0;
  for (size_t i = 0; i < in.size(); ++i) {
    sum_in += in[i];
    sum_out += out[i];
    if (out[i] == 0.f) continue;
    ++kept;
    CHECK(out[i] == Approx(in[i] / (1.f - p)));
  }
  // Binomial(10000, 0.7): stddev ~ 46, so +-300 is a wide bound.
  CHECK(std::abs(kept - 7000) < 300);
  // Mean of the output ~ mean of the input: stddev of the difference of means ~ 0.0066.
  CHECK(std::abs(sum_out - sum_in) / in.size() < 0.05);
}

TEST_CASE("dropout masks depend only on seed and counter", "[ops][dropout]") {
  Tape tape;
  Tensor x = Tensor::full({64}, 1.f);
  Rng first(9), again(9);
  auto a = ops::dropout(tape, x, 0.5f, true, first).to_vector();
  auto b = ops::dropout(tape, x, 0.5f, true, again).to_vector();
  CHECK(a == b);
  auto c = ops::dropout(tape, x, 0.5f, true, first).to_vector();  // counter advanced by 64
  CHECK(a != c);
  Rng other_seed(10);
  CHECK(ops::dropout(tape, x, 0.5f, true, other_seed).to_vector() != a);
}

TEST_CASE("dropout gradients match finite differences with a fixed mask", "[ops][dropout][grad]") {
  Tensor x = random_tensor({4, 6}, 43);
  auto f = [](Tape& tape, const std::vector<Tensor>& in) {
    Rng rng(11, 3);  // re-created on every call: the same mask each time
    return ops::dropout(tape, in[0], 0.4f, true, rng);
  };
  CHECK(check_gradients(f, {x}) == "");
}

TEST_CASE("dropout backward passes dy / (1 - p) only where kept", "[ops][dropout][grad]") {
  Tape tape;
  Rng rng(12);
  Tensor x = Tensor::full({200}, 1.f);
  x.set_requires_grad(true);
  Tensor y = ops::dropout(tape, x, 0.5f, true, rng);
  auto out = y.to_vector();
  tape.backward(y, Tensor::full({200}, 1.f));
  auto g = x.grad().to_vector();
  for (size_t i = 0; i < g.size(); ++i) CHECK(g[i] == (out[i] == 0.f ? 0.f : 2.f));
}

TEST_CASE("bf16 dropout is the f32 dropout rounded - with the same mask and the same f32 gradient", "[ops][dropout]") {
  Tensor x = random_tensor({4, 37}, 12);
  Tensor weights = random_tensor({4, 37}, 13, 1.f, false);
  std::vector<float> values[2], grads[2];
  for (int i = 0; i < 2; ++i) {
    DType dtype = i == 0 ? DType::f32 : DType::bf16;
    x.zero_grad();
    Rng rng(21);
    Tape tape;
    Tensor y = ops::dropout(tape, x, 0.3f, true, rng, dtype);
    REQUIRE(y.dtype() == dtype);
    for (int64_t j = 0; j < y.numel(); ++j) values[i].push_back(i == 0 ? y.data()[j] : bf16_to_f32(y.data_bf16()[j]));
    tape.backward(y, weights);
    grads[i] = x.grad().to_vector();
  }
  for (size_t j = 0; j < values[0].size(); ++j) CHECK(values[1][j] == bf16_to_f32(f32_to_bf16(values[0][j])));
  CHECK(grads[1] == grads[0]);
}
