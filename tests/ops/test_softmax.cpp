#include <cmath>
#include <functional>

#include <catch2/catch.hpp>

#include "grad_check.h"
#include "ops/masks.h"
#include "ops/softmax.h"

using namespace attn;
using attn::testing::check_gradients;
using attn::testing::random_tensor;

namespace {

using MaskAt = std::function<double(int64_t b, int64_t t, int64_t s)>;

// softmax over s of scores[b,t,s] + mask(b,t,s), in double, for scores (B,T,S).
std::vector<double> reference_softmax(const std::vector<double>& scores, const Shape& shape, const MaskAt& mask_at) {
  int64_t batch = shape[0], rows = shape[1], cols = shape[2];
  std::vector<double> p(scores.size());
  for (int64_t b = 0; b < batch; ++b)
    for (int64_t t = 0; t < rows; ++t) {
      int64_t base = (b * rows + t) * cols;
      auto z = [&](int64_t s) { return scores[base + s] + mask_at(b, t, s); };
      double max = -1e300, sum = 0.0;
      for (int64_t s = 0; s < cols; ++s) max = std::max(max, z(s));
      for (int64_t s = 0; s < cols; ++s) sum += std::exp(z(s) - max);
      for (int64_t s = 0; s < cols; ++s) p[base + s] = std::exp(z(s) - max) / sum;
    }
  return p;
}

std::vector<double> to_double(const Tensor& x, double scale = 1.0) {
  std::vector<double> values;
  for (float v : x.to_vector()) values.push_back(scale * v);
  return values;
}

double no_mask(int64_t, int64_t, int64_t) { return 0.0; }

}  // namespace

TEST_CASE("softmax matches a double reference and its rows sum to one", "[ops][softmax]") {
  Tape tape;
  Tensor x = random_tensor({2, 3, 5}, 21, 2.f, false);
  std::vector<float> p = ops::softmax(tape, x).to_vector();
  std::vector<double> expected = reference_softmax(to_double(x), x.shape(), no_mask);
  for (size_t i = 0; i < p.size(); ++i) CHECK(p[i] == Approx(expected[i]).margin(1e-6));
  for (int row = 0; row < 6; ++row) {
    double sum = 0.0;
    for (int s = 0; s < 5; ++s) sum += p[row * 5 + s];
    CHECK(std::fabs(sum - 1.0) < 1e-6);
  }
}

TEST_CASE("softmax gradients match finite differences", "[ops][softmax][grad]") {
  Tensor x = random_tensor({2, 3, 5}, 22);
  auto f = [](Tape& tape, const std::vector<Tensor>& in) { return ops::softmax(tape, in[0]); };
  CHECK(check_gradients(f, {x}) == "");
}

TEST_CASE("softmax with a (B,1,S) padding mask: gradients match finite differences", "[ops][softmax][grad]") {
  Tensor x = random_tensor({2, 3, 5}, 23);
  Tensor mask = ops::key_padding_mask({5, 3}, 5);  // (2,1,5)
  auto f = [mask](Tape& tape, const std::vector<Tensor>& in) { return ops::softmax(tape, in[0], mask); };
  CHECK(check_gradients(f, {x}) == "");
}

TEST_CASE("a masked position gets exactly zero weight, and a fully masked row stays finite", "[ops][softmax]") {
  Tape tape;
  Tensor x = random_tensor({3, 2, 4}, 24, 3.f, false);
  Tensor mask = ops::key_padding_mask({4, 2, 0}, 4);  // (3,1,4); sequence 2 is all padding
  std::vector<float> p = ops::softmax(tape, x, mask).to_vector();
  for (int t = 0; t < 2; ++t) {
    int base = (1 * 2 + t) * 4;  // sequence 1: keys 2 and 3 are padding
    CHECK(p[base + 2] == 0.f);
    CHECK(p[base + 3] == 0.f);
    CHECK(p[base + 0] + p[base + 1] == Approx(1.f).margin(1e-6));
  }
  std::vector<int64_t> lengths{4, 2, 0};
  auto padding = [&](int64_t b, int64_t, int64_t s) { return s < lengths[b] ? 0.0 : double(ops::kMaskValue); };
  std::vector<double> expected = reference_softmax(to_double(x), x.shape(), padding);
  // Sequences 0 and 1 only: in double, x + kMaskValue keeps x, so the all-padding reference differs.
  for (int i = 0; i < 2 * 2 * 4; ++i) CHECK(p[i] == Approx(expected[i]).margin(1e-6));
  for (int i = 2 * 2 * 4; i < 3 * 2 * 4; ++i) {
    CHECK(std::isfinite(p[i]));
    CHECK(p[i] == Approx(0.25f).margin(1e-6));  // all equal after absorbing x into kMaskValue
  }
}

TEST_CASE("softmax of pre-scaled scores with a causal mask equals scale-then-mask by hand", "[ops][softmax]") {
  Tape tape;
  const float alpha = 0.5f;
  Tensor x = random_tensor({2, 4, 4}, 25, 2.f, false);
  std::vector<float> scaled_values = x.to_vector();
  for (float& v : scaled_values) v *= alpha;
  Tensor scaled = Tensor::from_vector(x.shape(), scaled_values);
  Tensor mask = ops::causal_mask(4);  // (1,4,4), broadcast over the batch
  std::vector<float> p = ops::softmax(tape, scaled, mask).to_vector();

  // By hand: scale first, then add the mask: softmax(alpha x + M).
  auto causal = [](int64_t, int64_t t, int64_t s) { return s > t ? double(ops::kMaskValue) : 0.0; };
  std::vector<double> expected = reference_softmax(to_double(x, alpha), x.shape(), causal);
  for (size_t i = 0; i < p.size(); ++i) CHECK(p[i] == Approx(expected[i]).margin(1e-6));
  CHECK(p[1] == 0.f);  // row 0 sees only key 0
}

TEST_CASE("softmax backward adds into an existing gradient", "[ops][softmax][grad]") {
  Tensor x = random_tensor({2, 5}, 26);
  Tensor seed = random_tensor({2, 5}, 27, 1.f, false);
  Tape tape;
  tape.backward(ops::softmax(tape, x), seed);
  std::vector<float> fresh = x.grad().to_vector();
  tape.backward(ops::softmax(tape, x), seed);
  std::vector<float> twice = x.grad().to_vector();
  for (size_t i = 0; i < fresh.size(); ++i) CHECK(twice[i] == Approx(2.f * fresh[i]).margin(1e-7));
}

TEST_CASE("softmax rejects a mask that does not fit the scores", "[ops][softmax]") {
  Tape tape;
  Tensor x = random_tensor({2, 3, 5}, 28, 1.f, false);
  CHECK_THROWS_WITH(ops::softmax(tape, x, Tensor::zeros({2, 3, 4})),
                    Catch::Contains("(2, 3, 4)") && Catch::Contains("(2, 3, 5)"));
  CHECK_THROWS_AS(ops::softmax(tape, x, Tensor::zeros({2, 5})), Error);
}
