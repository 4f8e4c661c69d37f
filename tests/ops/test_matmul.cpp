#include <algorithm>
#include <cmath>
#include <iterator>

#include <catch2/catch.hpp>

#include "bf16_support.h"
#include "core/matmul_weight.h"
#include "core/rng.h"
#include "dnnl/context.h"
#include "grad_check.h"
#include "ops/activation.h"
#include "ops/gemm.h"
#include "ops/linear.h"
#include "ops/matmul.h"

using namespace attn;
using attn::testing::check_gradients;
using attn::testing::random_tensor;

namespace {

// Reference product of plain row-major (M,K) x (K,N) in double.
std::vector<float> reference_matmul(const std::vector<float>& a, const std::vector<float>& b, int m, int k, int n) {
  std::vector<float> c(m * n);
  for (int i = 0; i < m; ++i)
    for (int j = 0; j < n; ++j) {
      double sum = 0;
      for (int p = 0; p < k; ++p) sum += double(a[i * k + p]) * b[p * n + j];
      c[i * n + j] = float(sum);
    }
  return c;
}

std::vector<float> transpose(const std::vector<float>& x, int rows, int cols) {
  std::vector<float> t(x.size());
  for (int i = 0; i < rows; ++i)
    for (int j = 0; j < cols; ++j) t[j * rows + i] = x[i * cols + j];
  return t;
}

}  // namespace

TEST_CASE("matmul forward equals a reference product", "[ops][matmul]") {
  Tape tape;
  Tensor a = random_tensor({3, 5}, 1, 1.f, false);
  Tensor b = random_tensor({5, 4}, 2, 1.f, false);
  auto expected = reference_matmul(a.to_vector(), b.to_vector(), 3, 5, 4);
  auto actual = ops::matmul(tape, a, b).to_vector();
  for (size_t i = 0; i < expected.size(); ++i) CHECK(actual[i] == Approx(expected[i]).margin(1e-5));
}

TEST_CASE("transposed-descriptor matmul equals explicit transpose then matmul", "[ops][matmul]") {
  Tape tape;
  Tensor a_stored = random_tensor({5, 3}, 3, 1.f, false);  // holds a^T: a is (3,5)
  Tensor b_stored = random_tensor({4, 5}, 4, 1.f, false);  // holds b^T: b is (5,4)
  Tensor a_explicit = Tensor::from_vector({3, 5}, transpose(a_stored.to_vector(), 5, 3));
  Tensor b_explicit = Tensor::from_vector({5, 4}, transpose(b_stored.to_vector(), 4, 5));
  auto strided = ops::matmul(tape, a_stored, b_stored, {true, true, 1.f}).to_vector();
  auto explicit_product = ops::matmul(tape, a_explicit, b_explicit).to_vector();
  REQUIRE(strided.size() == explicit_product.size());
  for (size_t i = 0; i < strided.size(); ++i) CHECK(strided[i] == Approx(explicit_product[i]).margin(1e-5));
}

TEST_CASE("matmul gradients match finite differences", "[ops][matmul][grad]") {
  for (bool ta : {false, true})
    for (bool tb : {false, true}) {
      DYNAMIC_SECTION("transpose_a=" << ta << " transpose_b=" << tb) {
        ops::MatmulOptions options{ta, tb, 0.5f};
        Tensor a = random_tensor(ta ? Shape{2, 4, 3} : Shape{2, 3, 4}, 5);
        Tensor b = random_tensor(tb ? Shape{2, 5, 4} : Shape{2, 4, 5}, 6);
        auto f = [options](Tape& tape, const std::vector<Tensor>& x) { return ops::matmul(tape, x[0], x[1], options); };
        CHECK(check_gradients(f, {a, b}) == "");
      }
    }
}

TEST_CASE("matmul with a shared rank-2 b folds the batch and sums its gradient", "[ops][matmul][grad]") {
  Tensor a = random_tensor({2, 3, 4}, 7);
  Tensor b = random_tensor({4, 5}, 8);
  auto f = [](Tape& tape, const std::vector<Tensor>& x) { return ops::matmul(tape, x[0], x[1]); };
  CHECK(check_gradients(f, {a, b}) == "");
}

TEST_CASE("linear gradients match finite differences", "[ops][linear][grad]") {
  Tensor x = random_tensor({2, 3, 4}, 9);
  Tensor weight = random_tensor({5, 4}, 10);
  Tensor bias = random_tensor({5}, 11);
  auto f = [](Tape& tape, const std::vector<Tensor>& in) { return ops::linear(tape, in[0], in[1], in[2]); };
  CHECK(check_gradients(f, {x, weight, bias}) == "");
}

TEST_CASE("linear without bias", "[ops][linear][grad]") {
  Tensor x = random_tensor({3, 4}, 12);
  Tensor weight = random_tensor({2, 4}, 13);
  auto f = [](Tape& tape, const std::vector<Tensor>& in) { return ops::linear(tape, in[0], in[1], Tensor()); };
  CHECK(check_gradients(f, {x, weight}) == "");
}

TEST_CASE("the primitive cache reuses primitives for repeated shapes", "[dnnl][cache]") {
  auto& cache = dnn::Context::get().cache();
  Tape tape;
  Tensor a = random_tensor({7, 9}, 14, 1.f, false);
  Tensor b = random_tensor({9, 11}, 15, 1.f, false);
  ops::matmul(tape, a, b);  // may or may not be new
  cache.reset_counters();
  for (int i = 0; i < 5; ++i) ops::matmul(tape, a, b);
  CHECK(cache.misses() == 0);
  CHECK(cache.hits() == 5);
  Tensor c = random_tensor({9, 13}, 16, 1.f, false);
  ops::matmul(tape, a, c);  // a new shape builds one new primitive
  CHECK(cache.misses() == 1);
}

namespace {

MatmulWeight f32_weight(const Tensor& w) {
  MatmulWeight weight;
  weight.f32 = w;
  weight.prepare(Precision::f32);
  return weight;
}

}  // namespace

TEST_CASE("linear_relu gradients match finite differences", "[ops][linear][grad]") {
  Tensor x = random_tensor({2, 3, 4}, 41);
  Tensor weight = random_tensor({5, 4}, 42);
  Tensor bias = random_tensor({5}, 43);
  auto f = [](Tape& tape, const std::vector<Tensor>& in) {
    return ops::linear_relu(tape, in[0], f32_weight(in[1]), in[2]);
  };
  CHECK(check_gradients(f, {x, weight, bias}) == "");
}

TEST_CASE("linear_relu is relu(linear) bit for bit - values and every gradient in f32 and bf16", "[ops][linear]") {
  Precision precision = GENERATE(Precision::f32, Precision::bf16);
  INFO(choice_name(precision));
  if (precision == Precision::bf16) ATTN_SKIP_UNLESS_BF16_MATMUL();
  // Each run gets its own leaves, so that the two sets of gradients are separate.
  auto run = [&](bool fused) {
    Tensor x = random_tensor({6, 7, 24}, 44);
    Tensor w = random_tensor({40, 24}, 45, 0.3f);
    Tensor b = random_tensor({40}, 46);
    MatmulWeight weight;
    weight.f32 = w;
    weight.prepare(precision);
    Tape tape;
    Tensor y = fused ? ops::linear_relu(tape, x, weight, b) : ops::relu(tape, ops::linear(tape, x, weight, b));
    Tensor seed = random_tensor(y.shape(), 47, 1.f, false);
    tape.backward(y, seed);
    return std::vector<std::vector<float>>{y.to_vector(), x.grad().to_vector(), w.grad().to_vector(),
                                           b.grad().to_vector()};
  };
  auto fused = run(true), separate = run(false);
  int64_t zeros = 0;
  for (float v : fused[0]) zeros += v == 0.f;
  CHECK(zeros > 0);  // the ReLU cut something, so its backward's mask matters
  for (size_t part = 0; part < fused.size(); ++part) {
    INFO("part " << part << " (y, dx, dW, db)");
    CHECK(fused[part] == separate[part]);
  }
}

TEST_CASE("a ReLU post-op cannot follow accumulation", "[ops][matmul]") {
  Tensor a = random_tensor({2, 3}, 48, 1.f, false);
  Tensor b = random_tensor({3, 4}, 49, 1.f, false);
  Tensor c = Tensor::zeros({2, 4});
  ops::GemmOptions options = ops::GemmOptions::accumulating();
  options.relu = true;
  CHECK_THROWS_WITH(ops::gemm(ops::MatrixView::of(a), ops::MatrixView::of(b), ops::MatrixView::of(c), options),
                    Catch::Contains("ReLU post-op"));
}

TEST_CASE("bf16_copy rounds to nearest even as f32_to_bf16 does - plain and strided views", "[ops][matmul]") {
  // Ties, values just off a tie, infinities, a NaN and a large plain block (the threaded loop).
  std::vector<float> values(70000);
  Rng rng(50);
  for (float& v : values) v = rng.normal() * 100.f;
  const float specials[] = {
      1.00390625f, 1.01171875f, std::nextafter(1.00390625f, 2.f), -3.3e38f, INFINITY, -INFINITY, NAN, 0.f, -0.f};
  std::copy(std::begin(specials), std::end(specials), values.begin());
  Tensor x = Tensor::from_vector({350, 200}, values);
  Tensor plain = ops::bf16_copy(ops::MatrixView::of(x));
  Tensor strided = ops::bf16_copy(ops::MatrixView::of(x).transposed());  // (200, 350): a oneDNN reorder
  REQUIRE(plain.dtype() == DType::bf16);
  int64_t mismatches = 0;
  for (int64_t i = 0; i < 350; ++i)
    for (int64_t j = 0; j < 200; ++j) {
      const float value = values[i * 200 + j];
      const uint16_t expected = f32_to_bf16(value), got_plain = plain.data_bf16()[i * 200 + j],
                     got_strided = strided.data_bf16()[j * 350 + i];
      mismatches += got_plain != expected;
      // oneDNN's strided reorder on AVX2 writes -0 as +0: the same in every product.
      const bool same_zero = value == 0.f && bf16_to_f32(got_strided) == 0.f;
      if (got_strided != expected && !same_zero) UNSCOPED_INFO("strided mismatch at value " << value);
      mismatches += got_strided != expected && !same_zero;
    }
  CHECK(mismatches == 0);
  CHECK(plain.data_bf16()[0] == 0x3f80);  // 1 + 2^-8 is a tie: to the even 1.0
  CHECK(plain.data_bf16()[1] == 0x3f82);  // 1 + 3 * 2^-8 is a tie: to the even 1 + 2^-6
  CHECK(plain.data_bf16()[2] == 0x3f81);  // just above the tie of [0]: up
  CHECK(std::isnan(bf16_to_f32(plain.data_bf16()[6])));
}
