#include <algorithm>
#include <cmath>

#include <catch2/catch.hpp>

#include "grad_check.h"
#include "ops/log_softmax.h"

using namespace attn;
using attn::testing::check_gradients;
using attn::testing::random_tensor;

TEST_CASE("log_softmax equals x - logsumexp(x) in double", "[ops][log_softmax]") {
  Tape tape;
  Tensor x = random_tensor({3, 7}, 31, 2.f, false);
  std::vector<float> values = x.to_vector();
  std::vector<float> y = ops::log_softmax(tape, x).to_vector();
  for (int r = 0; r < 3; ++r) {
    double sum = 0.0;
    for (int j = 0; j < 7; ++j) sum += std::exp(double(values[r * 7 + j]));
    for (int j = 0; j < 7; ++j) CHECK(y[r * 7 + j] == Approx(values[r * 7 + j] - std::log(sum)).margin(1e-5));
  }
}

TEST_CASE("log_softmax stays finite for large logits", "[ops][log_softmax]") {
  Tape tape;
  Tensor x = Tensor::from_vector({1, 3}, {1000.f, 0.f, -1000.f});
  std::vector<float> y = ops::log_softmax(tape, x).to_vector();
  CHECK(y[0] == Approx(0.f).margin(1e-5));  // oneDNN's jit log is accurate to ~1e-6, not exact
  CHECK(y[1] == Approx(-1000.f));
  CHECK(std::isfinite(y[2]));
}

TEST_CASE("log_softmax gradients match finite differences", "[ops][log_softmax][grad]") {
  Tensor x = random_tensor({2, 3, 7}, 32);
  auto f = [](Tape& tape, const std::vector<Tensor>& in) { return ops::log_softmax(tape, in[0]); };
  CHECK(check_gradients(f, {x}) == "");
}

TEST_CASE("log_softmax_rows_in_place gives rows whose exponentials sum to one - as log_softmax does",
          "[ops][log_softmax]") {
  Tensor logits = attn::testing::random_tensor({3, 7}, 11, 5.f, false);  // (R, V)
  std::vector<float> before = logits.to_vector();
  logits.data()[7] = 80.f;  // a large logit must not overflow
  before[7] = 80.f;
  Tape tape;
  const std::vector<float> taped = ops::log_softmax(tape, logits).to_vector();
  ops::log_softmax_rows_in_place(logits);
  std::vector<float> after = logits.to_vector();
  for (int64_t r = 0; r < 3; ++r) {
    double sum = 0;
    for (int64_t v = 0; v < 7; ++v) {
      sum += std::exp(double(after[r * 7 + v]));
      CHECK(after[r * 7 + v] <= 0.f);
      // A row shifts by one constant: differences between logits are kept.
      CHECK(after[r * 7 + v] - after[r * 7] == Approx(before[r * 7 + v] - before[r * 7]).margin(1e-4));
    }
    CHECK(sum == Approx(1.0).epsilon(1e-5));
    for (int64_t v = 0; v < 7; ++v) CHECK(after[r * 7 + v] == Approx(taped[r * 7 + v]).margin(1e-5));
  }
}

TEST_CASE("log_sum_exp_rows gives the very log-probabilities of log_softmax_rows_in_place - and chunk maxima",
          "[ops][log_softmax]") {
  const int64_t rows = 4, width = 1000, chunk = 64;  // the last chunk is shorter (1000 = 15 x 64 + 40)
  Tensor logits = attn::testing::random_tensor({rows, width}, 12, 6.f, false);  // (R, V)
  logits.data()[width + 999] = 90.f;  // row 1's maximum in the short chunk, large enough to overflow a naive sum
  const std::vector<float> before = logits.to_vector();
  const ops::RowLogSumExp sums = ops::log_sum_exp_rows(logits, chunk);
  REQUIRE(sums.chunks == 16);
  REQUIRE(sums.log_sum.size() == size_t(rows));
  CHECK(logits.to_vector() == before);  // read only
  ops::log_softmax_rows_in_place(logits);
  const std::vector<float> log_probs = logits.to_vector();
  for (int64_t r = 0; r < rows; ++r) {
    for (int64_t v = 0; v < width; ++v) {
      INFO("row " << r << " token " << v);
      REQUIRE(before[r * width + v] - sums.log_sum[r] == log_probs[r * width + v]);  // bit for bit
    }
    for (int64_t c = 0; c < sums.chunks; ++c) {
      const auto begin = before.begin() + r * width + c * chunk;
      CHECK(sums.chunk_max[r * sums.chunks + c] ==
            *std::max_element(begin, begin + std::min(chunk, width - c * chunk)));
    }
  }
  CHECK(sums.chunk_max[sums.chunks + 15] == 90.f);
  CHECK_THROWS_WITH(ops::log_sum_exp_rows(Tensor::zeros({4}), chunk), Catch::Contains("(R, V)"));
  CHECK_THROWS_WITH(ops::log_sum_exp_rows(logits, 0), Catch::Contains("chunk 0"));
}
