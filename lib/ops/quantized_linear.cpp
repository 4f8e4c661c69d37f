#include "ops/quantized_linear.h"

#include "core/parallel.h"
#include "ops/gemm.h"

namespace attn::ops {

namespace {

// y[i][n] = acc[i][n] * column_scales[n] * row_scales[i] + b[n], in place.
void scale_back(Tensor& y, const float* row_scales, const float* column_scales, const float* b) {
  const int64_t rows = y.dim(0), cols = y.dim(1);
  float* out = y.data();
  parallel_for(rows, cols, kParallelPass, [&](int64_t first, int64_t last) {
    for (int64_t i = first; i < last; ++i) {
      float* row = out + i * cols;
      const float scale = row_scales[i];
      if (b) {
#pragma omp simd
        for (int64_t n = 0; n < cols; ++n) row[n] = row[n] * column_scales[n] * scale + b[n];
      } else {
#pragma omp simd
        for (int64_t n = 0; n < cols; ++n) row[n] = row[n] * column_scales[n] * scale;
      }
    }
  });
}

}  // namespace

Tensor quantized_linear(const Tensor& x_in, const QuantizedMatrix& weight, const Tensor& bias,
                        const PackedMatrix* packed) {
  ATTN_CHECK(weight.defined() && weight.values.rank() == 2 && x_in.rank() >= 1 && x_in.dim(-1) == weight.values.dim(1),
             "quantized_linear: input ", to_string(x_in.shape()), " does not fit weight ",
             weight.defined() ? to_string(weight.values.shape()) : "(none)");
  const int64_t inner = weight.values.dim(1), cols = weight.values.dim(0);
  ATTN_CHECK(!bias.defined() || bias.shape() == Shape{cols}, "quantized_linear: bias ",
             bias.defined() ? to_string(bias.shape()) : "", " does not fit weight ", to_string(weight.values.shape()));
  const int64_t rows = x_in.numel() / inner;
  QuantizedMatrix x = quantize_rows(x_in.view({rows, inner}), kActivationLevels);
  Tensor y = Tensor::empty({rows, cols});  // (M, N): the s32 sums, then y
  const MatrixView xq = MatrixView::of(x.values);
  if (!packed || !gemm_packed(xq, *packed, MatrixView::of(y), GemmOptions::overwrite()))
    gemm(xq, MatrixView::of(plain_weight(weight.values, packed)).transposed(), MatrixView::of(y));
  scale_back(y, x.scales.data(), weight.scales.data(), bias.defined() ? bias.data() : nullptr);
  Shape shape = x_in.shape();
  shape.back() = cols;
  return y.view(shape);
}

}  // namespace attn::ops
