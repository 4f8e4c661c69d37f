// ops::AttentionMask: key lengths, causality and ALiBi's per-head bias, against a plain loop.
#include <cmath>
#include <vector>

#include <catch2/catch.hpp>

#include "grad_check.h"
#include "ops/attention.h"

using namespace attn;
using attn::testing::check_gradients;
using attn::testing::random_tensor;

namespace {

// ALiBi's bias for H heads, slope_h = 2^-(h + 1) (the layer's slopes are tested in
// tests/layers/test_positions.cpp).
ops::AttentionBias alibi(int64_t heads) {
  ops::AttentionBias bias;
  for (int64_t h = 0; h < heads; ++h) bias.slopes.push_back(std::ldexp(1.f, -int(h + 1)));
  return bias;
}

struct Case {
  int64_t batch, heads, queries, keys, head_width;  // B, H, Tq, Tk, Dh
  ops::AttentionMask mask;
};

// Plain double loop: s = q.k / sqrt(Dh) - slope_h |i - j| over the visible keys, the query at
// position i = row + Tk - Tq; softmax.
std::vector<double> reference_weights(const Case& c, const Tensor& q, const Tensor& k) {
  auto qv = q.to_vector(), kv = k.to_vector();
  std::vector<double> weights(c.batch * c.heads * c.queries * c.keys, 0.0);
  for (int64_t b = 0; b < c.batch; ++b)
    for (int64_t h = 0; h < c.heads; ++h)
      for (int64_t i = 0; i < c.queries; ++i) {
        int64_t bh = b * c.heads + h, position = i + c.keys - c.queries;
        int64_t visible = c.mask.key_lengths.empty() ? c.keys : c.mask.key_lengths[b];
        if (c.mask.causal) visible = std::min(visible, position + 1);
        std::vector<double> s(visible);
        double max = -1e300, sum = 0;
        for (int64_t j = 0; j < visible; ++j) {
          double dot = 0;
          for (int64_t e = 0; e < c.head_width; ++e)
            dot += double(qv[(bh * c.queries + i) * c.head_width + e]) * kv[(bh * c.keys + j) * c.head_width + e];
          const double slope = c.mask.bias ? double(c.mask.bias.slopes[h]) : 0.0;
          s[j] = dot / std::sqrt(double(c.head_width)) - slope * double(std::abs(position - j));
          max = std::max(max, s[j]);
        }
        for (int64_t j = 0; j < visible; ++j) sum += s[j] = std::exp(s[j] - max);
        for (int64_t j = 0; j < visible; ++j) weights[(bh * c.queries + i) * c.keys + j] = s[j] / sum;
      }
  return weights;
}

std::vector<Case> cases() {
  return {
      {2, 2, 3, 5, 4, ops::AttentionMask::padding({5, 3})},
      {2, 2, 4, 4, 4, {{4, 2}, true, {}}},
      {2, 3, 4, 4, 4, {{4, 2}, true, alibi(3)}},                   // decoder self-attention with padding
      {1, 2, 2, 5, 4, ops::AttentionMask::causal_mask(alibi(2))},  // Tq < Tk: queries at a cache offset
      {2, 2, 4, 4, 8, {{3, 4}, false, alibi(2)}},                  // encoder self-attention: |i - j|
      {1, 2, 3, 6, 4, {{}, false, alibi(2)}},                      // not causal at an offset: keys after the query
  };
}

}  // namespace

TEST_CASE("attention under a mask equals a plain loop - lengths - causality - bias", "[ops][attention][mask]") {
  int index = 0;
  for (const Case& c : cases()) {
    DYNAMIC_SECTION("case " << index++) {
      Tape tape;
      Tensor q = random_tensor({c.batch, c.heads, c.queries, c.head_width}, 10, 1.f, false);
      Tensor k = random_tensor({c.batch, c.heads, c.keys, c.head_width}, 11, 1.f, false);
      Tensor v = random_tensor({c.batch, c.heads, c.keys, c.head_width}, 12, 1.f, false);
      ops::AttentionOptions options;
      options.mask = c.mask;
      auto weights = ops::attention(tape, q, k, v, options).weights.to_vector();
      auto expected = reference_weights(c, q, k);
      for (size_t i = 0; i < expected.size(); ++i) {
        if (expected[i] == 0.0) CHECK(weights[i] == 0.f);  // hidden keys: exactly 0
        CHECK(weights[i] == Approx(expected[i]).margin(1e-6));
      }
    }
  }
}

TEST_CASE("an attention bias shifts the scores of a row by -slope(head) |query position - key position|",
          "[ops][attention][mask]") {
  // q = 0: every score is 0, so a row's weights are softmax(bias) exactly.
  const int64_t H = 2, Tq = 2, Tk = 5, Dh = 4;
  Tape tape;
  Tensor q = Tensor::zeros({1, H, Tq, Dh});
  Tensor k = random_tensor({1, H, Tk, Dh}, 5, 1.f, false);
  ops::AttentionOptions options;
  options.mask.bias.slopes = {0.5f, 3.f};
  auto weights = ops::attention(tape, q, k, k, options).weights.to_vector();
  for (int64_t h = 0; h < H; ++h)
    for (int64_t i = 0; i < Tq; ++i) {
      int64_t position = i + Tk - Tq;  // the queries are the last Tq positions
      const float* row = weights.data() + (h * Tq + i) * Tk;
      const double slope = options.mask.bias.slopes[h];
      for (int64_t j = 1; j < Tk; ++j)
        CHECK(std::log(row[j] / row[0]) == Approx(-slope * double(std::abs(position - j) - position)).margin(1e-4));
    }
  // Slopes of 0 change no bit.
  auto plain = ops::attention(tape, k, k, k).weights.to_vector();
  options.mask.bias.slopes = {0.f, 0.f};
  CHECK(ops::attention(tape, k, k, k, options).weights.to_vector() == plain);
}

TEST_CASE("attention gradients under a biased mask match finite differences", "[ops][attention][mask][grad]") {
  int index = 0;
  for (const Case& c : cases()) {
    DYNAMIC_SECTION("case " << index++) {
      Tensor q = random_tensor({c.batch, c.heads, c.queries, c.head_width}, 20);
      Tensor k = random_tensor({c.batch, c.heads, c.keys, c.head_width}, 21);
      Tensor v = random_tensor({c.batch, c.heads, c.keys, c.head_width}, 22);
      ops::AttentionOptions options;
      options.mask = c.mask;
      auto f = [options](Tape& tape, const std::vector<Tensor>& x) {
        return ops::attention(tape, x[0], x[1], x[2], options).output;
      };
      CHECK(check_gradients(f, {q, k, v}) == "");
    }
  }
}

TEST_CASE("a decoding step over a KV cache gets the bias of its row in the full causal forward",
          "[ops][attention][mask]") {
  const int64_t B = 2, H = 3, T = 5, Dh = 4;
  Tape tape;
  Tensor q = random_tensor({B, H, T, Dh}, 30, 1.f, false);
  Tensor k = random_tensor({B, H, T, Dh}, 31, 1.f, false);
  Tensor v = random_tensor({B, H, T, Dh}, 32, 1.f, false);
  ops::AttentionOptions options;
  options.mask = ops::AttentionMask::causal_mask(alibi(H));
  auto full = ops::attention(tape, q, k, v, options);
  auto full_weights = full.weights.to_vector(), full_output = full.output.to_vector();
  auto qv = q.to_vector(), kv = k.to_vector(), vv = v.to_vector();
  // Rows 0 .. t of each (b, h) of a (B, H, T, Dh) tensor: (B, H, t + 1, Dh).
  auto prefix = [&](const std::vector<float>& x, int64_t first, int64_t count) {
    std::vector<float> rows;
    for (int64_t bh = 0; bh < B * H; ++bh)
      rows.insert(rows.end(), x.begin() + (bh * T + first) * Dh, x.begin() + (bh * T + first + count) * Dh);
    return Tensor::from_vector({B, H, count, Dh}, rows);
  };
  for (int64_t t = 0; t < T; ++t) {
    auto step = ops::attention(tape, prefix(qv, t, 1), prefix(kv, 0, t + 1), prefix(vv, 0, t + 1), options);
    auto step_weights = step.weights.to_vector(), step_output = step.output.to_vector();
    for (int64_t bh = 0; bh < B * H; ++bh) {
      for (int64_t j = 0; j <= t; ++j)
        CHECK(step_weights[bh * (t + 1) + j] == Approx(full_weights[(bh * T + t) * T + j]).margin(1e-6));
      for (int64_t e = 0; e < Dh; ++e)
        CHECK(step_output[bh * Dh + e] == Approx(full_output[(bh * T + t) * Dh + e]).margin(1e-6));
    }
  }
}

TEST_CASE("attention rejects a bias with more queries than keys", "[ops][attention][mask]") {
  Tape tape;
  Tensor q = Tensor::zeros({1, 1, 3, 2}), k = Tensor::zeros({1, 1, 2, 2});
  ops::AttentionOptions options;
  options.mask.bias = alibi(1);
  CHECK_THROWS_WITH(ops::attention(tape, q, k, k, options), Catch::Contains("bias needs Tq <= Tk"));
}

TEST_CASE("attention rejects bias slopes that are not one per head", "[ops][attention][mask]") {
  Tape tape;
  Tensor q = Tensor::zeros({1, 2, 2, 2});
  ops::AttentionOptions options;
  options.mask.bias = alibi(3);
  CHECK_THROWS_WITH(ops::attention(tape, q, q, q, options), Catch::Contains("3 bias slopes for H=2 heads"));
}
