#include "core/quantized_matrix.h"

#include <algorithm>
#include <cmath>

#include "core/parallel.h"

namespace attn {

namespace {

// One row of `cols` values into out[c] = round(row[c] / scale), |out[c]| <= levels; returns the
// row's scale (its largest |value| / levels, 1 for a row of zeros).
float quantize_row(const float* row, int64_t cols, int levels, int8_t* out) {
  float max_abs = 0.f;
#pragma omp simd reduction(max : max_abs)
  for (int64_t c = 0; c < cols; ++c) max_abs = std::max(max_abs, std::fabs(row[c]));
  const float scale = max_abs > 0.f ? max_abs / float(levels) : 1.f;
  const float inverse = 1.f / scale;
  // Round half away from zero by truncating v +- 0.5. Activations pass through this loop on
  // every int8 matmul, so it is spelt as selects GCC vectorises: std::copysign, std::min and
  // std::max kept it scalar (and std::nearbyint is a library call without SSE4.1). The clamp
  // keeps float rounding of row[c] * inverse inside the range, and sends a NaN to -levels.
  const float limit = float(levels);
  for (int64_t c = 0; c < cols; ++c) {
    float v = row[c] * inverse;
    v = v > -limit ? v : -limit;
    v = v < limit ? v : limit;
    const float half = v < 0.f ? -0.5f : 0.5f;
    out[c] = static_cast<int8_t>(static_cast<int32_t>(v + half));
  }
  return scale;
}

}  // namespace

QuantizedMatrix quantize_rows(const Tensor& matrix, int levels) {
  ATTN_CHECK(matrix.rank() == 2 && matrix.dtype() == DType::f32, "quantize_rows: needs an f32 matrix, got ",
             dtype_name(matrix.dtype()), " ", to_string(matrix.shape()));
  ATTN_CHECK(levels > 0 && levels <= 127, "quantize_rows: levels ", levels, " is not in [1, 127]");
  const int64_t rows = matrix.dim(0), cols = matrix.dim(1);
  QuantizedMatrix quantized{Tensor::empty({rows, cols}, DType::s8), Tensor::empty({rows})};
  const float* in = matrix.data();
  auto* values = static_cast<int8_t*>(quantized.values.raw());
  float* scales = quantized.scales.data();
  parallel_for(rows, cols, kParallelPass, [&](int64_t first, int64_t last) {
    for (int64_t r = first; r < last; ++r) scales[r] = quantize_row(in + r * cols, cols, levels, values + r * cols);
  });
  return quantized;
}

void dequantize_rows(const QuantizedMatrix& matrix, Tensor out) {
  ATTN_CHECK(matrix.values.rank() == 2 && matrix.values.dtype() == DType::s8 &&
                 matrix.scales.shape() == Shape{matrix.values.dim(0)} && out.shape() == matrix.values.shape(),
             "dequantize_rows: values ", to_string(matrix.values.shape()), ", scales ",
             to_string(matrix.scales.shape()), " and output ", to_string(out.shape()), " do not fit");
  const int64_t rows = matrix.values.dim(0), cols = matrix.values.dim(1);
  const auto* values = static_cast<const int8_t*>(matrix.values.raw());
  const float* scales = matrix.scales.data();
  float* result = out.data();
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t c = 0; c < cols; ++c) result[r * cols + c] = float(values[r * cols + c]) * scales[r];
}

Tensor dequantize_rows(const QuantizedMatrix& matrix) {
  Tensor out = Tensor::empty(matrix.values.shape());
  dequantize_rows(matrix, out);
  return out;
}

}  // namespace attn
