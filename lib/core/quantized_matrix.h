#pragma once
// QuantizedMatrix: an f32 matrix (N, K) as s8 values with one f32 scale per row,
//   m[n][k] ~= values[n][k] * scales[n],   scales[n] = max_k |m[n][k]| / levels,
// the form of every weight int8 decoding multiplies with (ops/quantized_linear.h) and of the
// matrices in a checkpoint attn-quantize writes. Rounding is to nearest (halves away from zero), so
// each element is off by at most scales[n] / 2.
//
// Weights use kWeightLevels = 63 (7 bits), not 127: without AVX512-VNNI, oneDNN 2.6's int8
// gemm multiplies u8 x s8 pairs with vpmaddubsw, whose 16-bit sum of two products saturates
// (2 x 255 x 127 > 32767; 2 x 255 x 63 < 32767). Measured: exact results with 7-bit weights,
// errors of ~10^5 with 8-bit ones. Activations, quantised on the fly, use kActivationLevels.
#include "core/tensor.h"

namespace attn {

constexpr int kWeightLevels = 63;
constexpr int kActivationLevels = 127;

struct QuantizedMatrix {
  Tensor values;  // s8 (N, K)
  Tensor scales;  // f32 (N)
  bool defined() const { return values.defined(); }
};

// Quantises each row of the f32 matrix (N, K) to [-levels, levels]; an all-zero row gets
// scale 1 (its values are 0 either way).
QuantizedMatrix quantize_rows(const Tensor& matrix, int levels = kWeightLevels);

// values * scales, row by row, into `out` (N, K) f32.
void dequantize_rows(const QuantizedMatrix& matrix, Tensor out);
Tensor dequantize_rows(const QuantizedMatrix& matrix);

}  // namespace attn
