#include <catch2/catch.hpp>

#include "dnnl/context.h"
#include "grad_check.h"
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
