// ops::gemm cuts a large product into pieces on attn's threads (along a batch axis, the rows or
// the columns): every cut must give the product a single call gives.
#include <cmath>
#include <string>
#include <vector>

#include <catch2/catch.hpp>

#include "core/parallel.h"
#include "grad_check.h"
#include "ops/gemm.h"
#include "ops/linear.h"
#include "thread_count.h"

using namespace attn;
using attn::testing::random_tensor;
using attn::testing::ThreadCount;

namespace {

float at(const ops::MatrixView& view, int64_t batch, int64_t row, int64_t col) {
  const size_t rank = view.dims.size();
  int64_t offset = row * view.strides[rank - 2] + col * view.strides[rank - 1];
  if (rank == 3) offset += (view.dims[0] == 1 ? 0 : batch) * view.strides[0];
  return static_cast<const float*>(view.data)[offset];
}

// c = alpha a b + bias (+ c_before when accumulating), then ReLU if asked, in double.
std::vector<float> reference(const ops::MatrixView& a, const ops::MatrixView& b, const std::vector<float>& c_before,
                             const ops::GemmOptions& options) {
  const size_t rank = a.dims.size();
  const int64_t batches = rank == 3 ? a.dims[0] : 1, m = a.rows(), k = a.cols(), n = b.cols();
  std::vector<float> c(size_t(batches * m * n));
  for (int64_t s = 0; s < batches; ++s)
    for (int64_t i = 0; i < m; ++i)
      for (int64_t j = 0; j < n; ++j) {
        double sum = 0;
        for (int64_t p = 0; p < k; ++p) sum += double(at(a, s, i, p)) * double(at(b, s, p, j));
        const size_t index = size_t((s * m + i) * n + j);
        double value = options.alpha * sum + (options.bias ? options.bias[j] : 0.0);
        if (options.accumulate) value += c_before[index];
        if (options.relu) value = std::max(value, 0.0);
        c[index] = float(value);
      }
  return c;
}

// Runs the product at two threads, checks it was handed to them, and compares with the reference.
void check_cut_product(const ops::MatrixView& a, const ops::MatrixView& b, Tensor c, const ops::GemmOptions& options) {
  const std::vector<float> before = c.to_vector();
  const std::vector<float> expected = reference(a, b, before, options);
  ThreadCount scope(2);
  const uint64_t loops = parallel_loops_started();
  ops::gemm(a, b, ops::MatrixView::of(c), options);
  CHECK(parallel_loops_started() == loops + 1);
  const std::vector<float> actual = c.to_vector();
  REQUIRE(actual.size() == expected.size());
  size_t wrong = 0;
  for (size_t i = 0; i < actual.size(); ++i)
    if (std::abs(actual[i] - expected[i]) > 1e-4f * (1.f + std::abs(expected[i]))) ++wrong;
  CHECK(wrong == 0);
}

}  // namespace

TEST_CASE("a product cut along its rows equals the reference - bias and ReLU included", "[ops][matmul]") {
  Tensor a = random_tensor({300, 96}, 1, 1.f, false), b = random_tensor({96, 80}, 2, 1.f, false);
  Tensor bias = random_tensor({80}, 3, 1.f, false);
  check_cut_product(ops::MatrixView::of(a), ops::MatrixView::of(b), Tensor::zeros({300, 80}),
                    ops::GemmOptions::overwrite(1.f, bias.data(), true));
}

TEST_CASE("a product with few rows is cut along its columns - the bias with them", "[ops][matmul]") {
  Tensor a = random_tensor({5, 256}, 4, 1.f, false), b = random_tensor({1000, 256}, 5, 1.f, false);
  Tensor bias = random_tensor({1000}, 6, 1.f, false);
  check_cut_product(ops::MatrixView::of(a), ops::MatrixView::of(b).transposed(), Tensor::zeros({5, 1000}),
                    ops::GemmOptions::overwrite(1.f, bias.data()));
}

TEST_CASE("a batched product is cut along its batch - with or without a broadcast b", "[ops][matmul]") {
  Tensor a = random_tensor({12, 40, 64}, 7, 1.f, false);
  Tensor shared = random_tensor({1, 64, 48}, 8, 1.f, false), own = random_tensor({12, 48, 64}, 9, 1.f, false);
  check_cut_product(ops::MatrixView::of(a), ops::MatrixView::of(shared), Tensor::zeros({12, 40, 48}),
                    ops::GemmOptions::overwrite());
  check_cut_product(ops::MatrixView::of(a), ops::MatrixView::of(own).transposed(), Tensor::zeros({12, 40, 48}),
                    ops::GemmOptions::overwrite());
}

TEST_CASE("a cut product accumulates into c as a single call does", "[ops][matmul]") {
  Tensor a = random_tensor({128, 512}, 10, 1.f, false), b = random_tensor({128, 64}, 11, 1.f, false);
  // d b-like product: a^T (512, 128) x b (128, 64), added to what c holds
  check_cut_product(ops::MatrixView::of(a).transposed(), ops::MatrixView::of(b),
                    random_tensor({512, 64}, 12, 1.f, false), ops::GemmOptions::accumulating(0.25f));
}

TEST_CASE("a product cut on the threads equals the same product on one thread", "[ops][matmul]") {
  Tensor a = random_tensor({256, 128}, 13, 1.f, false), b = random_tensor({128, 192}, 14, 1.f, false);
  Tensor one = Tensor::zeros({256, 192}), two = Tensor::zeros({256, 192});
  {
    ThreadCount scope(1);
    ops::gemm(ops::MatrixView::of(a), ops::MatrixView::of(b), ops::MatrixView::of(one));
  }
  {
    ThreadCount scope(2);
    ops::gemm(ops::MatrixView::of(a), ops::MatrixView::of(b), ops::MatrixView::of(two));
  }
  const std::vector<float> x = one.to_vector(), y = two.to_vector();
  size_t differ = 0;
  for (size_t i = 0; i < x.size(); ++i) differ += std::abs(x[i] - y[i]) > 1e-5f * (1.f + std::abs(x[i]));
  CHECK(differ == 0);
}
