#include <cmath>

#include <catch2/catch.hpp>

#include "grad_check.h"
#include "ops/cross_entropy.h"

using namespace attn;
using attn::testing::check_gradients;
using attn::testing::random_tensor;

namespace {

struct Reference {
  double loss = 0.0, nll = 0.0;
  int64_t tokens = 0;
};

// -sum_j q_j log p_j per non-pad row, q = (1 - eps) onehot(y) + eps / V, in double.
Reference reference_cross_entropy(const Tensor& logits, const std::vector<int32_t>& targets, double eps,
                                  int32_t pad_id) {
  int64_t vocab = logits.dim(-1), rows = logits.numel() / vocab;
  std::vector<float> x = logits.to_vector();
  Reference ref;
  for (int64_t r = 0; r < rows; ++r) {
    if (targets[r] == pad_id) continue;
    double sum = 0.0;
    for (int64_t j = 0; j < vocab; ++j) sum += std::exp(double(x[r * vocab + j]));
    double lse = std::log(sum);
    for (int64_t j = 0; j < vocab; ++j) {
      double q = eps / vocab + (j == targets[r] ? 1.0 - eps : 0.0);
      ref.loss -= q * (x[r * vocab + j] - lse);
    }
    ref.nll += lse - x[r * vocab + targets[r]];
    ++ref.tokens;
  }
  return ref;
}

testing::Function loss_of(std::vector<int32_t> targets, ops::CrossEntropyOptions options) {
  return [targets, options](Tape& tape, const std::vector<Tensor>& in) {
    return ops::cross_entropy(tape, in[0], targets, options).loss;
  };
}

}  // namespace

TEST_CASE("cross_entropy matches a double reference with and without smoothing", "[ops][cross_entropy]") {
  Tensor logits = Tensor::from_vector({3, 4}, {1.f, 2.f, 0.5f, -1.f,  //
                                               0.f, 0.f, 0.f, 0.f,    //
                                               3.f, -2.f, 1.f, 0.25f});
  std::vector<int32_t> targets{2, 0, 3};
  for (float eps : {0.f, 0.1f}) {
    DYNAMIC_SECTION("label_smoothing=" << eps) {
      Tape tape;
      auto result = ops::cross_entropy(tape, logits, targets, {eps, -1});
      Reference ref = reference_cross_entropy(logits, targets, eps, -1);
      CHECK(result.loss.item() == Approx(ref.loss).epsilon(1e-6));
      CHECK(result.nll_sum == Approx(ref.nll).epsilon(1e-6));
      CHECK(result.tokens == 3);
    }
  }
  // Row 1 is uniform over 4: its nll alone is log 4.
  Tape tape;
  CHECK(ops::cross_entropy(tape, logits, {-1, 0, -1}, {0.f, -1}).nll_sum == Approx(std::log(4.0)).epsilon(1e-6));
}

TEST_CASE("cross_entropy nll_sum equals the loss when label_smoothing is 0", "[ops][cross_entropy]") {
  Tape tape;
  Tensor logits = random_tensor({5, 7}, 61, 1.f, false);
  auto result = ops::cross_entropy(tape, logits, {1, 0, 6, 3, 0}, {0.f, 0});
  CHECK(result.tokens == 3);
  CHECK(result.loss.item() == Approx(result.nll_sum).epsilon(1e-6));
  auto smoothed = ops::cross_entropy(tape, logits, {1, 0, 6, 3, 0}, {0.1f, 0});
  CHECK(smoothed.nll_sum == Approx(result.nll_sum).epsilon(1e-12));
  CHECK(smoothed.loss.item() != Approx(result.loss.item()).epsilon(1e-4));
}

TEST_CASE("cross_entropy pad rows change neither loss nor tokens", "[ops][cross_entropy]") {
  Tape tape;
  Tensor real = random_tensor({2, 7}, 62, 1.f, false);
  Tensor noise = random_tensor({2, 7}, 63, 5.f, false);
  std::vector<float> r = real.to_vector(), n = noise.to_vector();
  std::vector<float> mixed;  // rows: real 0, noise 0, real 1, noise 1
  for (int row = 0; row < 2; ++row) {
    mixed.insert(mixed.end(), r.begin() + row * 7, r.begin() + (row + 1) * 7);
    mixed.insert(mixed.end(), n.begin() + row * 7, n.begin() + (row + 1) * 7);
  }
  Tensor padded = Tensor::from_vector({4, 7}, mixed);
  ops::CrossEntropyOptions options{0.1f, 0};
  auto plain = ops::cross_entropy(tape, real, {3, 5}, options);
  auto with_pads = ops::cross_entropy(tape, padded, {3, 0, 5, 0}, options);
  CHECK(with_pads.loss.item() == Approx(plain.loss.item()).epsilon(1e-7));
  CHECK(with_pads.nll_sum == Approx(plain.nll_sum).epsilon(1e-12));
  CHECK(with_pads.tokens == plain.tokens);
  CHECK(plain.tokens == 2);
}

TEST_CASE("cross_entropy gradients match finite differences", "[ops][cross_entropy][grad]") {
  std::vector<int32_t> targets{3, 0, 6, 1, 0, 2};  // pad_id 0 at rows 1 and 4
  for (float eps : {0.f, 0.1f}) {
    DYNAMIC_SECTION("label_smoothing=" << eps) {
      Tensor logits = random_tensor({2, 3, 7}, 64);
      CHECK(check_gradients(loss_of(targets, {eps, 0}), {logits}) == "");
    }
  }
}

TEST_CASE("cross_entropy gives pad rows exactly zero gradient", "[ops][cross_entropy][grad]") {
  Tensor logits = random_tensor({4, 7}, 65);
  Tape tape;
  auto result = ops::cross_entropy(tape, logits, {2, 0, 5, 0}, {0.1f, 0});
  tape.backward(result.loss);
  std::vector<float> grad = logits.grad().to_vector();
  for (int row = 0; row < 4; ++row) {
    double sum = 0.0, magnitude = 0.0;
    for (int j = 0; j < 7; ++j) {
      sum += grad[row * 7 + j];
      magnitude += std::fabs(grad[row * 7 + j]);
      if (row % 2 == 1) CHECK(grad[row * 7 + j] == 0.f);
    }
    CHECK(std::fabs(sum) < 1e-6);  // sum_j (p_j - q_j) = 0
    if (row % 2 == 0) CHECK(magnitude > 0.1);
  }
}

TEST_CASE("cross_entropy rejects bad targets", "[ops][cross_entropy]") {
  Tape tape;
  Tensor logits = random_tensor({2, 7}, 66, 1.f, false);
  CHECK_THROWS_WITH(ops::cross_entropy(tape, logits, {1, 9}, {}),
                    Catch::Contains("target id 9") && Catch::Contains("row 1"));
  CHECK_THROWS_WITH(ops::cross_entropy(tape, logits, {1, -3}, {}), Catch::Contains("target id -3"));
  CHECK_THROWS_AS(ops::cross_entropy(tape, logits, {1}, {}), Error);
}

TEST_CASE("cross_entropy with overwrite_logits writes the same gradient over the logits",
          "[ops][cross_entropy][grad]") {
  const std::vector<int32_t> targets = {3, 0, 6, 1};  // row 1 is padding
  ops::CrossEntropyOptions options;
  options.label_smoothing = 0.1f;
  auto gradient = [&](bool overwrite, const void** data, const void** grad) {
    Tensor logits = random_tensor({2, 2, 7}, 67);
    options.overwrite_logits = overwrite;
    Tape tape;
    tape.backward(ops::cross_entropy(tape, logits, targets, options).loss, 0.5f);
    *data = logits.raw();
    *grad = logits.grad().raw();
    return logits.grad().to_vector();
  };
  const void *data = nullptr, *grad = nullptr;
  std::vector<float> separate = gradient(false, &data, &grad);
  CHECK(grad != data);
  std::vector<float> in_place = gradient(true, &data, &grad);
  CHECK(grad == data);                                     // no second (N, V) buffer
  CHECK(in_place == separate);                             // bit for bit: training's loss sequence does not change
  for (int j = 7; j < 14; ++j) CHECK(in_place[j] == 0.f);  // the pad row
}
