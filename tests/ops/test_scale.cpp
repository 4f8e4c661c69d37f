#include <catch2/catch.hpp>

#include "grad_check.h"
#include "ops/scale.h"

using namespace attn;
using attn::testing::check_gradients;
using attn::testing::random_tensor;

TEST_CASE("scale and add_scalar and affine forward values", "[ops][scale]") {
  Tape tape;
  Tensor x = Tensor::from_vector({2, 2}, {1.f, -2.f, 0.25f, 4.f});
  CHECK(ops::scale(tape, x, 3.f).to_vector() == std::vector<float>{3.f, -6.f, 0.75f, 12.f});
  CHECK(ops::add_scalar(tape, x, 1.5f).to_vector() == std::vector<float>{2.5f, -0.5f, 1.75f, 5.5f});
  // 1 - z, as the GRU cell uses it.
  CHECK(ops::affine(tape, x, -1.f, 1.f).to_vector() == std::vector<float>{0.f, 3.f, 0.75f, -3.f});
}

TEST_CASE("scale gradients match finite differences", "[ops][scale][grad]") {
  Tensor x = random_tensor({3, 4}, 21);
  auto f = [](Tape& tape, const std::vector<Tensor>& in) { return ops::scale(tape, in[0], -2.5f); };
  CHECK(check_gradients(f, {x}) == "");
}

TEST_CASE("add_scalar gradients match finite differences", "[ops][scale][grad]") {
  Tensor x = random_tensor({3, 4}, 22);
  auto f = [](Tape& tape, const std::vector<Tensor>& in) { return ops::add_scalar(tape, in[0], 0.75f); };
  CHECK(check_gradients(f, {x}) == "");
}

TEST_CASE("one minus z via scale then add_scalar has gradient -dy", "[ops][scale][grad]") {
  Tensor z = random_tensor({2, 5}, 23);
  auto f = [](Tape& tape, const std::vector<Tensor>& in) {
    return ops::add_scalar(tape, ops::scale(tape, in[0], -1.f), 1.f);
  };
  CHECK(check_gradients(f, {z}) == "");
  Tape tape;
  Tensor w = random_tensor({2, 5}, 24);
  tape.backward(ops::affine(tape, w, -1.f, 1.f), Tensor::full({2, 5}, 1.f));
  for (float g : w.grad().to_vector()) CHECK(g == -1.f);
}
