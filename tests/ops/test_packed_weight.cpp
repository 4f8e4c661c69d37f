// Packed weights (decoding): ops::linear with a weight packed in oneDNN's blocked layout gives
// the plain weight's products, in f32, bf16 and int8, for every row count decoding meets; a tape that
// wants gradients and a re-prepared weight never see the packed copy.
#include <cmath>
#include <cstdint>
#include <cstring>
#include <vector>

#include <catch2/catch.hpp>

#include "bf16_support.h"
#include "core/matmul_weight.h"
#include "core/parallel.h"
#include "grad_check.h"
#include "ops/gemm.h"
#include "ops/linear.h"

using namespace attn;
using attn::testing::random_tensor;

namespace {

// Neither dimension is a multiple of the 16 x 64 blocks, so the packed copy has padding.
constexpr int64_t kInner = 40, kOuter = 72;

MatmulWeight packed_weight(const Tensor& f32, Precision precision) {
  MatmulWeight weight;
  weight.f32 = f32;
  weight.prepare(precision);
  weight.packed = ops::pack_weight(precision == Precision::bf16   ? weight.bf16
                                   : precision == Precision::int8 ? weight.int8.values
                                                                  : weight.f32);
  return weight;
}

MatmulWeight plain_weight(const Tensor& f32, Precision precision) {
  MatmulWeight weight;
  weight.f32 = f32;
  weight.prepare(precision);
  return weight;
}

// The same products up to the order of f32 sums (the two layouts may block K differently); a
// deeper K rounds more.
void check_same_products(const std::vector<float>& packed, const std::vector<float>& plain, double tolerance = 1e-5) {
  REQUIRE(packed.size() == plain.size());
  for (size_t i = 0; i < plain.size(); ++i)
    CHECK(std::fabs(packed[i] - plain[i]) <= tolerance * (1 + std::fabs(plain[i])));
}

}  // namespace

TEST_CASE("a packed weight gives the plain weight's products for 1 to 160 rows - with bias and leading dims",
          "[ops][packed]") {
  Precision precision = GENERATE(Precision::f32, Precision::bf16, Precision::int8);
  INFO(choice_name(precision));
  if (precision == Precision::bf16) ATTN_SKIP_UNLESS_BF16_MATMUL();
  Tensor w = random_tensor({kOuter, kInner}, 31, 0.5f, false);
  Tensor bias = random_tensor({kOuter}, 32, 1.f, false);
  MatmulWeight packed = packed_weight(w, precision);
  MatmulWeight plain = plain_weight(w, precision);
  Tape tape;
  NoGradScope no_grad(tape);
  for (int64_t rows : {1, 5, 32, 160}) {
    INFO(rows << " rows");
    Tensor x = random_tensor({rows, 1, kInner}, 33 + uint64_t(rows), 1.f, false);
    Tensor y = ops::linear(tape, x, packed, bias);
    CHECK(y.shape() == Shape{rows, 1, kOuter});
    check_same_products(y.to_vector(), ops::linear(tape, x, plain, bias).to_vector());
  }
}

TEST_CASE("gemm_packed runs where oneDNN has a blocked kernel and names a misfit", "[ops][packed]") {
  Tensor w = random_tensor({kOuter, kInner}, 34, 0.5f, false);
  auto packed = ops::pack_weight(w);
  Tensor x = random_tensor({3, kInner}, 35, 1.f, false);
  Tensor y = Tensor::empty({3, kOuter});
  bool ran = ops::gemm_packed(ops::MatrixView::of(x), *packed, ops::MatrixView::of(y), {});
  // oneDNN 2.6 has its blocked (brgemm) f32 matmul on AVX-512 CPUs, the ones with bf16 matmuls.
  if (ops::bf16_gemm_supported()) CHECK(ran);
  if (ran) {
    Tensor expected = Tensor::empty({3, kOuter});
    ops::gemm(ops::MatrixView::of(x), ops::MatrixView::of(w).transposed(), ops::MatrixView::of(expected));
    check_same_products(y.to_vector(), expected.to_vector());
  }
  Tensor wrong = Tensor::zeros({3, kInner + 1});
  CHECK_THROWS_WITH(ops::gemm_packed(ops::MatrixView::of(wrong), *packed, ops::MatrixView::of(y), {}),
                    Catch::Contains("do not chain"));
}

TEST_CASE("an s8 packed weight gives the exact integer sums of s8 rows - and refuses f32 rows", "[ops][packed]") {
  QuantizedMatrix w = quantize_rows(random_tensor({kOuter, kInner}, 39, 0.5f, false));
  auto packed = ops::pack_weight(w.values);
  const auto* wq = static_cast<const int8_t*>(w.values.raw());
  for (int64_t rows : {1, 7, 160}) {
    INFO(rows << " rows");
    QuantizedMatrix x =
        quantize_rows(random_tensor({rows, kInner}, 40 + uint64_t(rows), 1.f, false), kActivationLevels);
    Tensor y = Tensor::empty({rows, kOuter});
    bool ran = ops::gemm_packed(ops::MatrixView::of(x.values), *packed, ops::MatrixView::of(y), {});
    // oneDNN 2.6's blocked int8 kernel needs AVX-512 VNNI, which every CPU with bf16 matmuls has.
    if (ops::bf16_gemm_supported()) CHECK(ran);
    if (!ran) continue;
    const auto* xq = static_cast<const int8_t*>(x.values.raw());
    for (int64_t i = 0; i < rows; ++i)
      for (int64_t n = 0; n < kOuter; ++n) {
        int32_t sum = 0;
        for (int64_t k = 0; k < kInner; ++k) sum += int32_t(xq[i * kInner + k]) * int32_t(wq[n * kInner + k]);
        CHECK(y.data()[i * kOuter + n] == float(sum));
      }
  }
  Tensor f32_rows = Tensor::zeros({3, kInner});
  Tensor y = Tensor::empty({3, kOuter});
  CHECK_THROWS_WITH(ops::gemm_packed(ops::MatrixView::of(f32_rows), *packed, ops::MatrixView::of(y), {}),
                    Catch::Contains("packed weight's dtype"));
}

TEST_CASE("a tape that wants gradients gets dW in the parameter - the packed copy serves the forward only",
          "[ops][packed]") {
  Tensor w = random_tensor({kOuter, kInner}, 36, 0.5f, true);
  MatmulWeight packed = packed_weight(w, Precision::f32);
  Tensor x = random_tensor({4, kInner}, 37, 1.f, true);
  Tape tape;
  Tensor y = ops::linear(tape, x, packed, Tensor());
  REQUIRE(y.requires_grad());
  // d(sum y)/dW[n][k] = sum_i x[i][k]
  Tensor ones = Tensor::from_vector(y.shape(), std::vector<float>(size_t(y.numel()), 1.f));
  tape.backward(y, ones);
  const float* grad = w.grad().data();
  for (int64_t k = 0; k < kInner; ++k) {
    double column = 0;
    for (int64_t i = 0; i < 4; ++i) column += x.data()[i * kInner + k];
    CHECK(grad[k] == Approx(column).margin(1e-5));
    CHECK(grad[(kOuter - 1) * kInner + k] == Approx(column).margin(1e-5));
  }
}

TEST_CASE("preparing a weight again drops its packed copy - which no longer matches the values", "[ops][packed]") {
  Tensor w = random_tensor({kOuter, kInner}, 38, 0.5f, false);
  MatmulWeight weight = packed_weight(w, Precision::f32);
  REQUIRE(weight.packed);
  weight.prepare(Precision::f32);
  CHECK_FALSE(weight.packed);
  CHECK_THROWS_WITH(ops::pack_weight(Tensor::zeros({kInner})), Catch::Contains("f32, bf16 or s8 matrix"));
}

TEST_CASE("bf16 training's packed weight gives the plain weight's values and gradients", "[ops][packed][grad]") {
  ATTN_SKIP_UNLESS_BF16_MATMUL();
  bool relu = GENERATE(false, true);
  INFO("relu " << relu);
  auto run = [&](bool packed) {
    Tensor w = random_tensor({kOuter, kInner}, 39, 0.5f, true);
    Tensor b = random_tensor({kOuter}, 40, 1.f, true);
    Tensor x = random_tensor({3, 50, kInner}, 41, 1.f, true);
    MatmulWeight weight = packed ? packed_weight(w, Precision::bf16) : plain_weight(w, Precision::bf16);
    Tape tape;
    Tensor y = relu ? ops::linear_relu(tape, x, weight, b) : ops::linear(tape, x, weight, b);
    tape.backward(y, random_tensor(y.shape(), 42, 1.f, false));
    return std::vector<std::vector<float>>{y.to_vector(), x.grad().to_vector(), w.grad().to_vector(),
                                           b.grad().to_vector()};
  };
  auto packed = run(true), plain = run(false);
  for (size_t part = 0; part < plain.size(); ++part) {
    INFO("part " << part << " (y, dx, dW, db)");
    check_same_products(packed[part], plain[part]);
  }
}

TEST_CASE("a few rows against a wide packed float weight run in column parts on the threads - the same products",
          "[ops][packed]") {
  const bool accumulate = GENERATE(false, true);
  INFO((accumulate ? "c += a W^T" : "c = a W^T + bias"));
  ATTN_SKIP_UNLESS_BF16_MATMUL();  // the blocked kernels come with AVX-512 (see above)
  // 1000 columns: four parts of 256 but the last (232, with padding); K = 300 has padding too.
  constexpr int64_t kRows = 5, kWideOuter = 1000, kDeepInner = 300;
  Tensor w = random_tensor({kWideOuter, kDeepInner}, 41, 0.5f, false);
  Tensor bias = random_tensor({kWideOuter}, 42, 1.f, false);
  Tensor x = random_tensor({kRows, kDeepInner}, 43, 1.f, false);
  Tensor start = random_tensor({kRows, kWideOuter}, 44, 1.f, false);
  const ops::GemmOptions options =
      accumulate ? ops::GemmOptions::accumulating() : ops::GemmOptions::overwrite(1.f, bias.data());
  Tensor expected = start.clone();
  ops::gemm(ops::MatrixView::of(x), ops::MatrixView::of(w).transposed(), ops::MatrixView::of(expected), options);
  for (DType dtype : {DType::f32, DType::bf16}) {
    INFO(dtype_name(dtype));
    Tensor weight = dtype == DType::bf16 ? plain_weight(w, Precision::bf16).bf16 : w;
    auto packed = ops::pack_weight(weight);
    set_parallel_threads(2);
    Tensor y = start.clone();
    const uint64_t loops = parallel_loops_started();
    // false would mean a fallback to the plain weight: the parts must have their own kernels.
    REQUIRE(ops::gemm_packed(ops::MatrixView::of(x), *packed, ops::MatrixView::of(y), options));
    // Where bf16 is emulated on AVX-512 alone, oneDNN has no kernel for a part: one call does all.
    if (dtype == DType::f32 || testing::native_bf16_isa()) CHECK(parallel_loops_started() > loops);
    set_parallel_threads(0);
    if (dtype == DType::f32) {
      check_same_products(y.to_vector(), expected.to_vector(), 5e-5);
    } else {
      Tensor expected_bf16 = start.clone();
      ops::gemm(ops::MatrixView::of(x), ops::MatrixView::of(weight).transposed(), ops::MatrixView::of(expected_bf16),
                options);
      check_same_products(y.to_vector(), expected_bf16.to_vector(), 5e-5);
    }
  }
}

TEST_CASE("a packed weight unpacks to its plain values - and its rows read back as the products see them",
          "[ops][packed]") {
  Precision precision = GENERATE(Precision::f32, Precision::bf16, Precision::int8);
  INFO(choice_name(precision));
  if (precision == Precision::bf16) ATTN_SKIP_UNLESS_BF16_MATMUL();
  MatmulWeight weight = packed_weight(random_tensor({kOuter, kInner}, 45, 0.5f, false), precision);
  const Tensor& values = precision == Precision::bf16   ? weight.bf16
                         : precision == Precision::int8 ? weight.int8.values
                                                        : weight.f32;
  const size_t bytes = size_t(values.numel()) * dtype_size(values.dtype());
  CHECK(ops::plain_weight(values, weight.packed.get()).same_storage(values));  // values present: itself

  Tensor dropped = values.clone();
  dropped.drop_values();
  CHECK_THROWS_WITH(dropped.raw(), Catch::Contains("has no values"));
  Tensor unpacked = ops::plain_weight(dropped, weight.packed.get());
  REQUIRE(unpacked.shape() == values.shape());
  REQUIRE(unpacked.dtype() == values.dtype());
  CHECK(std::memcmp(unpacked.raw(), values.raw(), bytes) == 0);
  CHECK_THROWS_WITH(ops::plain_weight(dropped, nullptr), Catch::Contains("no packed copy"));

  // Rows read back as the products see them: f32 and bf16 values exactly, s8 ones times their scales.
  const float* scales = precision == Precision::int8 ? weight.int8.scales.data() : nullptr;
  const auto plain_value = [&](int64_t row, int64_t column) {
    const int64_t at = row * kInner + column;
    if (precision == Precision::bf16) return bf16_to_f32(static_cast<const uint16_t*>(values.raw())[at]);
    if (precision == Precision::int8) return float(static_cast<const int8_t*>(values.raw())[at]) * scales[row];
    return values.data()[at];
  };
  if (precision == Precision::int8)
    CHECK_THROWS_WITH(ops::packed_rows(*weight.packed, {0}, nullptr), Catch::Contains("needs its row scales"));
  const std::vector<int32_t> rows = {0, kOuter - 1, 17, 17, 64, 3};  // 64 begins the second block of 64
  std::vector<float> read(rows.size() * size_t(kInner));
  ops::packed_rows(*weight.packed, rows, read.data(), scales);
  for (size_t i = 0; i < rows.size(); ++i)
    for (int64_t k = 0; k < kInner; ++k) {
      INFO("row " << rows[i] << ", column " << k);
      REQUIRE(read[i * size_t(kInner) + size_t(k)] == plain_value(rows[i], k));
    }
  CHECK_THROWS_WITH(ops::packed_rows(*weight.packed, {int32_t(kOuter)}, read.data(), scales),
                    Catch::Contains("row 72"));
}
