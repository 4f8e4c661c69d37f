// ops::rotary: RoFormer's rotation of attention heads by position, against a plain loop, its
// relative property, its gradient, and attention over rotated heads against a naive loop.
#include <cmath>
#include <vector>

#include <catch2/catch.hpp>

#include "grad_check.h"
#include "ops/attention.h"
#include "ops/rotary.h"

using namespace attn;
using attn::testing::check_gradients;
using attn::testing::random_tensor;

namespace {

// Plain double loop: pair (2i, 2i+1) of row t turns by (first + t) 10000^(-2i / Dh).
std::vector<double> reference_rotation(const Tensor& x, int64_t first) {
  const auto values = x.to_vector();
  const int64_t length = x.dim(2), width = x.dim(3);
  std::vector<double> y(values.size());
  for (size_t row = 0; row < values.size() / size_t(width); ++row)
    for (int64_t i = 0; i < width / 2; ++i) {
      const double angle = double(first + int64_t(row) % length) * std::pow(10000.0, -2.0 * double(i) / double(width));
      const double even = values[row * width + 2 * i], odd = values[row * width + 2 * i + 1];
      y[row * width + 2 * i] = even * std::cos(angle) - odd * std::sin(angle);
      y[row * width + 2 * i + 1] = even * std::sin(angle) + odd * std::cos(angle);
    }
  return y;
}

// (1, 1, 1, Dh) row `row` of x (B, H, T, Dh) as its own tensor.
Tensor row_of(const Tensor& x, int64_t row) {
  const auto values = x.to_vector();
  const int64_t width = x.dim(3);
  return Tensor::from_vector({1, 1, 1, width},
                             std::vector<float>(values.begin() + row * width, values.begin() + (row + 1) * width));
}

double dot(const std::vector<float>& a, const std::vector<float>& b) {
  double sum = 0;
  for (size_t i = 0; i < a.size(); ++i) sum += double(a[i]) * b[i];
  return sum;
}

}  // namespace

TEST_CASE("rotary turns each pair of dimensions by position times its frequency", "[ops][rotary]") {
  Tape tape;
  NoGradScope no_grad(tape);
  Tensor x = random_tensor({2, 3, 5, 8}, 1, 1.f, false);
  for (int64_t first : {0, 7, 3000}) {
    INFO("first " << first);
    const auto y = ops::rotary(tape, x, first).to_vector();
    const auto expected = reference_rotation(x, first);
    for (size_t i = 0; i < y.size(); ++i) CHECK(y[i] == Approx(expected[i]).margin(1e-5));
  }
  // Position 0 is the identity.
  CHECK(ops::rotary(tape, row_of(x, 0), 0).to_vector() == row_of(x, 0).to_vector());
}

TEST_CASE("rotated queries and keys have dot products that depend only on their distance", "[ops][rotary]") {
  Tape tape;
  NoGradScope no_grad(tape);
  Tensor q = random_tensor({1, 1, 1, 16}, 2, 1.f, false), k = random_tensor({1, 1, 1, 16}, 3, 1.f, false);
  auto score = [&](int64_t query_position, int64_t key_position) {
    return dot(ops::rotary(tape, q, query_position).to_vector(), ops::rotary(tape, k, key_position).to_vector());
  };
  for (int64_t distance : {0, 1, 5}) {
    INFO("distance " << distance);
    CHECK(score(distance, 0) == Approx(score(distance + 40, 40)).margin(1e-4));
    CHECK(score(distance, 0) == Approx(score(distance + 123, 123)).margin(1e-4));
  }
  CHECK(std::fabs(score(1, 0) - score(5, 0)) > 1e-3);  // and on the distance it does
}

TEST_CASE("rotary of a bf16 input is the f32 rotation rounded to bf16", "[ops][rotary]") {
  Tape tape;
  NoGradScope no_grad(tape);
  Tensor x = random_tensor({1, 2, 4, 8}, 4, 1.f, false);
  Tensor x_bf16 = Tensor::empty(x.shape(), DType::bf16);
  for (int64_t i = 0; i < x.numel(); ++i) x_bf16.data_bf16()[i] = f32_to_bf16(x.data()[i]);
  Tensor y = ops::rotary(tape, x_bf16, 9);
  REQUIRE(y.dtype() == DType::bf16);
  const auto expected = ops::rotary(tape, x, 9).to_vector();
  for (int64_t i = 0; i < y.numel(); ++i)
    CHECK(bf16_to_f32(y.data_bf16()[i]) == Approx(expected[i]).margin(2e-2));  // two bf16 roundings
}

TEST_CASE("rotary gradients match finite differences at any first position", "[ops][rotary][grad]") {
  for (int64_t first : {0, 6}) {
    INFO("first " << first);
    Tensor x = random_tensor({2, 2, 3, 6}, 5);
    auto f = [first](Tape& tape, const std::vector<Tensor>& in) { return ops::rotary(tape, in[0], first); };
    CHECK(check_gradients(f, {x}) == "");
  }
  // Through attention, which reads both rotated q and k (causal, at a cache offset).
  Tensor q = random_tensor({1, 2, 2, 4}, 6), k = random_tensor({1, 2, 4, 4}, 7), v = random_tensor({1, 2, 4, 4}, 8);
  auto f = [](Tape& tape, const std::vector<Tensor>& in) {
    ops::AttentionOptions options;
    options.mask.causal = true;
    return ops::attention(tape, ops::rotary(tape, in[0], 2), ops::rotary(tape, in[1], 0), in[2], options).output;
  };
  CHECK(check_gradients(f, {q, k, v}) == "");
}

TEST_CASE("a step's rotated query equals its row of the full rotation", "[ops][rotary]") {
  Tape tape;
  NoGradScope no_grad(tape);
  Tensor x = random_tensor({1, 1, 6, 8}, 9, 1.f, false);
  const auto full = ops::rotary(tape, x, 0).to_vector();
  for (int64_t t = 0; t < 6; ++t) {
    const auto step = ops::rotary(tape, row_of(x, t), t).to_vector();
    for (int64_t e = 0; e < 8; ++e) CHECK(step[e] == Approx(full[t * 8 + e]).margin(1e-6));
  }
}

TEST_CASE("attention over rotary heads equals a naive loop", "[ops][rotary][attention]") {
  const int64_t B = 2, H = 2, T = 5, Dh = 4;
  Tape tape;
  NoGradScope no_grad(tape);
  Tensor q = random_tensor({B, H, T, Dh}, 10, 1.f, false), k = random_tensor({B, H, T, Dh}, 11, 1.f, false),
         v = random_tensor({B, H, T, Dh}, 12, 1.f, false);
  ops::AttentionOptions options;
  options.mask = {{5, 3}, true, {}};  // the decoder's causal self-attention, with padding
  const auto output = ops::attention(tape, ops::rotary(tape, q, 0), ops::rotary(tape, k, 0), v, options)
                          .output.to_vector();  // (B, H, T, Dh)
  const auto qr = reference_rotation(q, 0), kr = reference_rotation(k, 0);
  const auto vv = v.to_vector();
  const std::vector<int64_t> lengths{5, 3};
  for (int64_t bh = 0; bh < B * H; ++bh)
    for (int64_t i = 0; i < T; ++i) {
      const int64_t visible = std::min(lengths[bh / H], i + 1);
      std::vector<double> p(visible);
      double max = -1e300, sum = 0;
      for (int64_t j = 0; j < visible; ++j) {
        double s = 0;
        for (int64_t e = 0; e < Dh; ++e) s += qr[(bh * T + i) * Dh + e] * kr[(bh * T + j) * Dh + e];
        p[j] = s / std::sqrt(double(Dh));
        max = std::max(max, p[j]);
      }
      for (double& value : p) sum += value = std::exp(value - max);
      for (int64_t e = 0; e < Dh; ++e) {
        double o = 0;
        for (int64_t j = 0; j < visible; ++j) o += p[j] / sum * vv[(bh * T + j) * Dh + e];
        CHECK(output[(bh * T + i) * Dh + e] == Approx(o).margin(1e-5));
      }
    }
}

TEST_CASE("rotary rejects an odd head width", "[ops][rotary]") {
  Tape tape;
  CHECK_THROWS_WITH(ops::rotary(tape, Tensor::zeros({1, 1, 2, 3}), 0), Catch::Contains("must be even"));
}
