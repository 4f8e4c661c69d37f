// ops::linear_cross_entropy against finite differences and against the unfused path it
// replaces, ops::cross_entropy(ops::linear(x, W, b)).
#include <algorithm>
#include <cmath>

#include <catch2/catch.hpp>

#include "bf16_support.h"
#include "grad_check.h"
#include "ops/cross_entropy.h"
#include "ops/gemm.h"
#include "ops/linear.h"
#include "ops/linear_cross_entropy.h"

using namespace attn;
using attn::testing::check_gradients;
using attn::testing::random_tensor;

namespace {

constexpr int32_t kPad = 0;

// `rows` targets in [1, vocab), with pad rows at every fourth place.
std::vector<int32_t> targets_with_padding(int64_t rows, int64_t vocab) {
  std::vector<int32_t> targets;
  for (int64_t r = 0; r < rows; ++r) targets.push_back(r % 4 == 3 ? kPad : int32_t(1 + (r * 7) % (vocab - 1)));
  return targets;
}

struct Outcome {
  float loss = 0.f;
  double nll = 0.0;
  int64_t tokens = 0;
  std::vector<float> dx, dw, db;
};

// Loss and gradients of x, W, b by the fused op (fused) or by linear + cross_entropy.
Outcome run(bool fused, const Tensor& x, const Tensor& w, const Tensor& b, const std::vector<int32_t>& targets,
            float eps, int64_t chunk_columns) {
  for (Tensor t : {x, w, b})
    if (t.defined()) t.zero_grad();
  Tape tape;
  ops::CrossEntropyResult result;
  if (fused) {
    result = ops::linear_cross_entropy(tape, x, w, b, targets, {eps, kPad, chunk_columns});
  } else {
    result = ops::cross_entropy(tape, ops::linear(tape, x, w, b), targets, {eps, kPad});
  }
  tape.backward(result.loss, 0.37f);  // a seed like the trainer's 1 / target tokens
  return {result.loss.item(),   result.nll_sum,       result.tokens,
          x.grad().to_vector(), w.grad().to_vector(), b.defined() ? b.grad().to_vector() : std::vector<float>{}};
}

float max_abs(const std::vector<float>& v) {
  float m = 0.f;
  for (float e : v) m = std::max(m, std::fabs(e));
  return m;
}

float max_difference(const std::vector<float>& a, const std::vector<float>& b) {
  REQUIRE(a.size() == b.size());
  float m = 0.f;
  for (size_t i = 0; i < a.size(); ++i) m = std::max(m, std::fabs(a[i] - b[i]));
  return m;
}

}  // namespace

TEST_CASE("linear_cross_entropy's gradients match finite differences over ragged chunks and padding",
          "[ops][linear_cross_entropy]") {
  // V = 13 in chunks of 4: 4 + 4 + 4 + 1 columns; rows 3 and 7 are padding.
  const std::vector<int32_t> targets = targets_with_padding(8, 13);
  float eps = GENERATE(0.f, 0.1f);
  bool with_bias = GENERATE(false, true);
  DYNAMIC_SECTION("label_smoothing=" << eps << " bias=" << with_bias) {
    std::vector<Tensor> inputs{random_tensor({2, 4, 5}, 1), random_tensor({13, 5}, 2, 0.5f)};
    if (with_bias) inputs.push_back(random_tensor({13}, 3, 0.5f));
    auto loss = [&](Tape& tape, const std::vector<Tensor>& in) {
      Tensor bias = in.size() > 2 ? in[2] : Tensor();
      return ops::linear_cross_entropy(tape, in[0], in[1], bias, targets, {eps, kPad, 4}).loss;
    };
    CHECK(check_gradients(loss, inputs) == "");
  }
}

TEST_CASE("linear_cross_entropy gives padding rows no gradient and counts only real targets",
          "[ops][linear_cross_entropy]") {
  Tensor x = random_tensor({8, 6}, 4), w = random_tensor({20, 6}, 5), b = random_tensor({20}, 6);
  const std::vector<int32_t> targets = targets_with_padding(8, 20);
  Outcome out = run(true, x, w, b, targets, 0.1f, 7);
  CHECK(out.tokens == 6);
  for (int64_t r : {3, 7})
    for (int64_t k = 0; k < 6; ++k) CHECK(out.dx[r * 6 + k] == 0.f);
  CHECK(max_abs(out.dx) > 0.f);
}

// In f32 the only difference from linear + cross_entropy is the order of the sums over the
// vocabulary: the logits of a chunk are the same products (each element is one dot product of
// D terms either way), but each row's sum of exponentials is a sum of per-chunk sums, each term
// shifted by its chunk's max and the sums rescaled to the running max in double, where
// cross_entropy adds all V terms shifted by the row's max in one vectorised loop. Two orders of a
// sum of V positive f32 terms differ by at most V * 2^-24 of it (the bound of recursive
// summation), and the other shift changes each term by fast_exp's relative error (2e-7, on
// either side) and the rounding of the shifted argument: together a relative delta below
// V * 2^-24 + 1e-6 (2.8e-5 for V = 300). Each row's logsumexp then moves by at most delta, its
// loss and nll by as much, and every p_j = exp(z_j - lse) by delta relative. So:
//   loss, nll  tokens * delta (+ the final f32 rounding of the loss sum);
//   dx         dloss * delta * max |W| from p, plus the reordered sum of dx over the chunks:
//              another V * 2^-24 * sum_j |dL_j| |W_jk| <= 2 dloss V 2^-24 max |W| (sum |dL| <= 2 dloss);
//   dW, db     dloss * delta * (rows * max |x| or rows): the rows are summed in one product either way.
// With one chunk (the whole vocabulary) the order is cross_entropy's own, and everything is
// bit for bit the same.
TEST_CASE("linear_cross_entropy equals linear + cross_entropy in f32 up to the vocabulary's summation order",
          "[ops][linear_cross_entropy]") {
  const int64_t rows = 37, width = 24, vocab = 300;
  Tensor x = random_tensor({rows, width}, 7), w = random_tensor({vocab, width}, 8, 0.3f),
         b = random_tensor({vocab}, 9, 0.3f);
  const std::vector<int32_t> targets = targets_with_padding(rows, vocab);
  float eps = GENERATE(0.f, 0.1f);
  DYNAMIC_SECTION("label_smoothing=" << eps) {
    Outcome unfused = run(false, x, w, b, targets, eps, 0);
    REQUIRE(unfused.tokens == 28);

    SECTION("one chunk: bit for bit") {
      Outcome fused = run(true, x, w, b, targets, eps, vocab);
      CHECK(fused.loss == unfused.loss);
      CHECK(fused.nll == unfused.nll);
      CHECK(fused.dx == unfused.dx);
      CHECK(fused.dw == unfused.dw);
      CHECK(fused.db == unfused.db);
    }
    SECTION("chunks of 64 columns, the last one 44") {
      Outcome fused = run(true, x, w, b, targets, eps, 64);
      const double reorder = double(vocab) * std::ldexp(1.0, -24);
      const double delta = reorder + 1e-6;
      const double seed = 0.37;
      CHECK(fused.tokens == unfused.tokens);
      CHECK(std::fabs(fused.loss - unfused.loss) <= unfused.tokens * delta + 1e-6 * std::fabs(unfused.loss));
      CHECK(std::fabs(fused.nll - unfused.nll) <= unfused.tokens * delta);
      CHECK(max_difference(fused.dx, unfused.dx) <= seed * (delta + 2 * reorder) * max_abs(w.to_vector()));
      CHECK(max_difference(fused.dw, unfused.dw) <= seed * delta * rows * max_abs(x.to_vector()));
      CHECK(max_difference(fused.db, unfused.db) <= seed * delta * rows);
    }
  }
}

TEST_CASE("linear_cross_entropy's default chunks cover a vocabulary wider than one chunk",
          "[ops][linear_cross_entropy]") {
  // (rows x V) > kChunkElements: several chunks of a multiple of 64 columns.
  const int64_t rows = 512, width = 8, vocab = 8200 + 17;
  REQUIRE(rows * vocab > ops::kChunkElements);
  Tensor x = random_tensor({rows, width}, 10), w = random_tensor({vocab, width}, 11, 0.3f);
  const std::vector<int32_t> targets = targets_with_padding(rows, vocab);
  Outcome unfused = run(false, x, w, Tensor(), targets, 0.1f, 0);
  Outcome fused = run(true, x, w, Tensor(), targets, 0.1f, 0);
  const double reorder = double(vocab) * std::ldexp(1.0, -24), delta = reorder + 1e-6;  // as above
  CHECK(std::fabs(fused.nll - unfused.nll) <= unfused.tokens * delta);
  CHECK(max_difference(fused.dx, unfused.dx) <= 0.37 * (delta + 2 * reorder) * max_abs(w.to_vector()));
}

TEST_CASE("linear_cross_entropy counts the model's FLOPs once - not the backward's recomputed logits",
          "[ops][linear_cross_entropy]") {
  const int64_t rows = 16, width = 8, vocab = 50;
  Tensor x = random_tensor({rows, width}, 12), w = random_tensor({vocab, width}, 13);
  ops::reset_gemm_flops();
  run(true, x, w, Tensor(), targets_with_padding(rows, vocab), 0.f, 16);
  CHECK(ops::gemm_flops() == uint64_t(3 * 2 * rows * vocab * width));  // forward, dx, dW
}

TEST_CASE("linear_cross_entropy refuses targets outside the vocabulary and mismatched shapes",
          "[ops][linear_cross_entropy]") {
  Tensor x = random_tensor({3, 4}, 14), w = random_tensor({10, 4}, 15);
  Tape tape;
  CHECK_THROWS_WITH(ops::linear_cross_entropy(tape, x, w, Tensor(), {1, 10, 2}),
                    Catch::Contains("target id 10 at row 1 is outside the vocabulary [0, 10)"));
  CHECK_THROWS_WITH(ops::linear_cross_entropy(tape, x, w, Tensor(), {1, 2}), Catch::Contains("2 targets for 3 rows"));
  CHECK_THROWS_WITH(ops::linear_cross_entropy(tape, random_tensor({3, 5}, 16), w, Tensor(), {1, 2, 3}),
                    Catch::Contains("does not fit weight"));
}

// bf16: the same bf16 operands as the unfused bf16 linear, so the logits agree; what differs is
// the summation order (as in f32) and, through it, a rounding of the gradient chunk to bf16
// that may land one bf16 step (2^-8 relative) apart.
TEST_CASE("linear_cross_entropy in bf16 agrees with the unfused bf16 linear + cross_entropy",
          "[ops][linear_cross_entropy][bf16]") {
  ATTN_SKIP_UNLESS_BF16_MATMUL();
  const int64_t rows = 37, width = 32, vocab = 300;
  Tensor x = random_tensor({rows, width}, 17), w = random_tensor({vocab, width}, 18, 0.3f);
  MatmulWeight weight;
  weight.f32 = w;
  weight.prepare(Precision::bf16);
  const std::vector<int32_t> targets = targets_with_padding(rows, vocab);
  auto outcome = [&](bool fused) {
    for (Tensor t : {x, w}) t.zero_grad();
    Tape tape;
    ops::CrossEntropyResult result =
        fused ? ops::linear_cross_entropy(tape, x, weight, Tensor(), targets, {0.1f, kPad, 64})
              : ops::cross_entropy(tape, ops::linear(tape, x, weight, Tensor()), targets, {0.1f, kPad});
    tape.backward(result.loss, 0.37f);
    return Outcome{result.loss.item(), result.nll_sum, result.tokens, x.grad().to_vector(), w.grad().to_vector(), {}};
  };
  Outcome unfused = outcome(false), fused = outcome(true);
  CHECK(std::fabs(fused.loss - unfused.loss) <= 1e-5 * std::fabs(unfused.loss));
  CHECK(max_difference(fused.dx, unfused.dx) <= std::ldexp(1.0, -8) * max_abs(unfused.dx));
  CHECK(max_difference(fused.dw, unfused.dw) <= std::ldexp(1.0, -8) * max_abs(unfused.dw));
}
