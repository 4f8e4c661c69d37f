// The first contribution to an untouched gradient overwrites it (Tensor::grad_to_write: no
// zero fill); every later one adds. For each op whose backward does this: using x twice gives
// twice the gradient of using it once, and a gradient already holding values is added to.
#include <functional>
#include <vector>

#include <catch2/catch.hpp>

#include "core/rng.h"
#include "grad_check.h"
#include "ops/activation.h"
#include "ops/add.h"
#include "ops/dropout.h"
#include "ops/heads.h"
#include "ops/layer_norm.h"
#include "ops/linear.h"
#include "ops/matmul.h"
#include "ops/scale.h"

using namespace attn;
using attn::testing::random_tensor;

namespace {

using UnaryOp = std::function<Tensor(Tape&, const Tensor&)>;

struct NamedOp {
  const char* name;
  UnaryOp op;
};

std::vector<NamedOp> ops_of_x() {
  static const Tensor weight = random_tensor({6, 8}, 41, 0.5f, false);
  static const Tensor bias = random_tensor({6}, 42, 1.f, false);
  static const Tensor gamma = random_tensor({8}, 43, 1.f, false);
  static const Tensor beta = random_tensor({8}, 44, 1.f, false);
  static const Tensor right = random_tensor({2, 8, 5}, 45, 1.f, false);
  static const Tensor other = random_tensor({2, 3, 8}, 48, 1.f, false);
  return {
      {"linear", [](Tape& t, const Tensor& x) { return ops::linear(t, x, weight, bias); }},
      {"layer_norm", [](Tape& t, const Tensor& x) { return ops::layer_norm(t, x, gamma, beta); }},
      {"gelu", [](Tape& t, const Tensor& x) { return ops::gelu(t, x); }},
      {"split_heads", [](Tape& t, const Tensor& x) { return ops::split_heads(t, x, 2); }},
      {"scale", [](Tape& t, const Tensor& x) { return ops::scale(t, x, -1.5f); }},
      {"add", [](Tape& t, const Tensor& x) { return ops::add(t, x, other, 0.5f, 1.f); }},
      {"matmul", [](Tape& t, const Tensor& x) { return ops::matmul(t, x, right); }},
      {"dropout",
       [](Tape& t, const Tensor& x) {
         Rng rng(9);  // the same mask on every call
         return ops::dropout(t, x, 0.5f, true, rng);
       }},
  };
}

// d(sum(w * (op(x) + op(x)))) / dx, with x's gradient holding `start` before the backward.
std::vector<float> gradient(const UnaryOp& op, int uses, float start) {
  Tensor x = random_tensor({2, 3, 8}, 46, 1.f, true);
  if (start != 0.f) x.grad().fill(start);
  Tape tape;
  Tensor y = op(tape, x);
  if (uses == 2) y = ops::add(tape, y, op(tape, x));
  tape.backward(y, random_tensor(y.shape(), 47, 1.f, false));
  return x.grad().to_vector();
}

}  // namespace

TEST_CASE("a backward overwrites an untouched gradient and adds to a written one - op by op", "[ops][grad]") {
  for (const NamedOp& named : ops_of_x()) {
    INFO(named.name);
    std::vector<float> once = gradient(named.op, 1, 0.f);
    std::vector<float> twice = gradient(named.op, 2, 0.f);
    std::vector<float> onto_ones = gradient(named.op, 1, 1.f);
    REQUIRE(twice.size() == once.size());
    bool nonzero = false;
    for (size_t i = 0; i < once.size(); ++i) {
      CHECK(twice[i] == Approx(2 * once[i]).margin(1e-5));
      CHECK(onto_ones[i] == Approx(1 + once[i]).margin(1e-5));
      nonzero = nonzero || once[i] != 0.f;
    }
    CHECK(nonzero);
  }
}
