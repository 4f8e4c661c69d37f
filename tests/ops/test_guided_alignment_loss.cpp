#include <cmath>

#include <catch2/catch.hpp>

#include "grad_check.h"
#include "ops/attention.h"
#include "ops/concat.h"
#include "ops/guided_alignment_loss.h"

using namespace attn;
using attn::testing::check_gradients;
using attn::testing::random_tensor;

namespace {

constexpr int64_t kB = 2, kH = 2, kTq = 3, kTk = 4, kDh = 4;
const std::vector<int32_t> kKeyLengths{4, 3};  // row 1's last key is padding

// (B, Tq, Tk): row (0, 0) on key 1; row (0, 2) split over keys 0 and 3; row (1, 1) on key 2;
// the others unlinked (row (1, 2) stands for a padded target position).
Tensor alignment_targets() {
  std::vector<float> a(kB * kTq * kTk, 0.f);
  auto at = [&](int64_t b, int64_t i, int64_t j) -> float& { return a[size_t((b * kTq + i) * kTk + j)]; };
  at(0, 0, 1) = 1.f;
  at(0, 2, 0) = 0.5f;
  at(0, 2, 3) = 0.5f;
  at(1, 1, 2) = 1.f;
  return Tensor::from_vector({kB, kTq, kTk}, a);
}

// Positive weights summing to 1 per row, as attention's.
Tensor softmax_like(uint64_t seed) {
  Tensor x = random_tensor({kB, kH, kTq, kTk}, seed, 0.5f, false);
  std::vector<float> values = x.to_vector();
  for (int64_t r = 0; r < kB * kH * kTq; ++r) {
    float sum = 0.f;
    for (int64_t j = 0; j < kTk; ++j) sum += values[size_t(r * kTk + j)] = std::exp(values[size_t(r * kTk + j)]);
    for (int64_t j = 0; j < kTk; ++j) values[size_t(r * kTk + j)] /= sum;
  }
  Tensor w = Tensor::from_vector({kB, kH, kTq, kTk}, values);
  w.set_requires_grad(true);
  return w;
}

ops::AttentionOptions guided_attention() {
  ops::AttentionOptions options;
  options.mask.key_lengths = kKeyLengths;
  options.weights_grad = true;
  return options;
}

}  // namespace

TEST_CASE("guided alignment loss: ce and mse by hand over the linked rows", "[ops][guided_alignment]") {
  Tensor w = softmax_like(3);
  Tensor a = alignment_targets();
  const std::vector<float> p = w.to_vector();
  auto weight = [&](int64_t b, int64_t h, int64_t i, int64_t j) {
    return double(p[size_t(((b * kH + h) * kTq + i) * kTk + j)]);
  };
  for (std::optional<int> head : {std::optional<int>(1), std::optional<int>()}) {
    auto pick = [&](int64_t b, int64_t i, int64_t j) {
      return head ? weight(b, *head, i, j) : (weight(b, 0, i, j) + weight(b, 1, i, j)) / 2;
    };
    const double eps = 1e-6;
    const double ce = -std::log(pick(0, 0, 1) + eps) - 0.5 * std::log(pick(0, 2, 0) + eps) -
                      0.5 * std::log(pick(0, 2, 3) + eps) - std::log(pick(1, 1, 2) + eps);
    double mse = 0;
    const std::vector<float> targets = a.to_vector();
    for (auto [b, i] : {std::pair{0, 0}, std::pair{0, 2}, std::pair{1, 1}})
      for (int64_t j = 0; j < kTk; ++j) {
        const double d = pick(b, i, j) - targets[size_t((b * kTq + i) * kTk + j)];
        mse += d * d;
      }
    Tape tape;
    ops::GuidedAlignmentOptions options;
    options.head = head;
    ops::GuidedAlignmentResult result = ops::guided_alignment_loss(tape, w, a, options);
    CHECK(result.rows == 3);
    CHECK(result.loss.item() == Approx(ce).epsilon(1e-5));
    options.cost = GuidedAlignmentCost::mse;
    result = ops::guided_alignment_loss(tape, w, a, options);
    CHECK(result.loss.item() == Approx(mse).epsilon(1e-5));
  }
}

TEST_CASE("guided alignment loss gradients match finite differences", "[ops][guided_alignment][grad]") {
  Tensor a = alignment_targets();
  for (GuidedAlignmentCost cost : {GuidedAlignmentCost::ce, GuidedAlignmentCost::mse})
    for (std::optional<int> head : {std::optional<int>(0), std::optional<int>()}) {
      DYNAMIC_SECTION(choice_name(cost) << " head " << (head ? std::to_string(*head) : "mean")) {
        ops::GuidedAlignmentOptions options;
        options.cost = cost;
        options.head = head;
        auto direct = [&](Tape& tape, const std::vector<Tensor>& x) {
          return ops::guided_alignment_loss(tape, x[0], a, options).loss;
        };
        CHECK(check_gradients(direct, {softmax_like(5)}, {1e-3f}) == "");

        // Through attention: q and k get the loss's gradient through the softmax.
        auto through = [&](Tape& tape, const std::vector<Tensor>& x) {
          Tensor weights = ops::attention(tape, x[0], x[1], x[2], guided_attention()).weights;
          return ops::guided_alignment_loss(tape, weights, a, options).loss;
        };
        CHECK(check_gradients(through, {random_tensor({kB, kH, kTq, kDh}, 11), random_tensor({kB, kH, kTk, kDh}, 12),
                                        random_tensor({kB, kH, kTk, kDh}, 13)}) == "");
      }
    }
}

TEST_CASE("attention with weights_grad: output and guided loss together - with dropout",
          "[ops][guided_alignment][grad]") {
  Tensor a = alignment_targets();
  for (float rate : {0.f, 0.3f}) {
    DYNAMIC_SECTION("dropout " << rate) {
      // dP = dropout'(dO V^T) + dL/dP: both the output (weighted by check_gradients) and the
      // loss on the weights reach q, k and v.
      auto f = [&](Tape& tape, const std::vector<Tensor>& x) {
        Rng rng(99);  // the same mask at every evaluation
        ops::AttentionOptions options = guided_attention();
        options.dropout = rate;
        options.training = rate > 0.f;
        options.rng = &rng;
        ops::AttentionResult attended = ops::attention(tape, x[0], x[1], x[2], options);
        Tensor loss = ops::guided_alignment_loss(tape, attended.weights, a).loss;
        return ops::concat(tape, {attended.output.view({attended.output.numel()}), loss});
      };
      CHECK(check_gradients(f, {random_tensor({kB, kH, kTq, kDh}, 21), random_tensor({kB, kH, kTk, kDh}, 22),
                                random_tensor({kB, kH, kTk, kDh}, 23)}) == "");
    }
  }
}

TEST_CASE("attention with weights_grad unused: gradients bit for bit those without it", "[ops][guided_alignment]") {
  Tensor q = random_tensor({kB, kH, kTq, kDh}, 31), k = random_tensor({kB, kH, kTk, kDh}, 32),
         v = random_tensor({kB, kH, kTk, kDh}, 33);
  auto gradients = [&](bool weights_grad) {
    for (Tensor* t : {&q, &k, &v}) t->zero_grad();
    Tape tape;
    ops::AttentionOptions options = guided_attention();
    options.weights_grad = weights_grad;
    Tensor output = ops::attention(tape, q, k, v, options).output;
    tape.backward(output, random_tensor(output.shape(), 34, 1.f, false));
    return std::vector<std::vector<float>>{q.grad().to_vector(), k.grad().to_vector(), v.grad().to_vector()};
  };
  CHECK(gradients(true) == gradients(false));
}

TEST_CASE("guided alignment loss rejects shapes and heads that do not fit", "[ops][guided_alignment]") {
  Tape tape;
  Tensor w = softmax_like(7);
  CHECK_THROWS_WITH(ops::guided_alignment_loss(tape, w, Tensor::zeros({kB, kTq, kTk + 1})),
                    Catch::Contains("do not fit weights"));
  ops::GuidedAlignmentOptions options;
  options.head = int(kH);
  CHECK_THROWS_WITH(ops::guided_alignment_loss(tape, w, alignment_targets(), options),
                    Catch::Contains("head 2 outside the 2 heads"));
}
