#pragma once
// quantized_linear: y = x W^T + b in int8, for decoding (no backward).
//
// Each row of x is quantised on the fly to s8 with its own scale (max |x_i| / 127), multiplied
// with the s8 weight on oneDNN's int8 matmul (s32 accumulation, exact), and the s32 result is
// scaled back in f32 in one pass: y[i][n] = acc[i][n] * w_scale[n] * x_scale[i] + b[n].
// Error: |y - x W^T| <= sum_k (|x_k| w_scale[n] / 2 + |W_nk| x_scale / 2 + x_scale w_scale / 4)
// per element (each operand is off by at most half its step); tests/ops check this bound.
//
// The scales stay out of the matmul on purpose: oneDNN 2.6 runs an int8 matmul with run-time
// output scales only as "gemm:jit", which repacks the weight on every call, while a product
// without them, on a weight packed once (ops::pack_weight), runs on the VNNI brgemm kernel,
// faster at the 5 to 160 rows of beam decoding (docs/performance.md, "The int8 kernel"). Without
// VNNI oneDNN still multiplies s8 with s8 (the 7-bit weights of core/quantized_matrix.h).
// Shapes: x (..., K), weight (N, K), bias (N) or undefined.
#include "core/matmul_weight.h"
#include "core/quantized_matrix.h"

namespace attn::ops {

// `packed`, when given, is weight.values packed by ops::pack_weight.
Tensor quantized_linear(const Tensor& x, const QuantizedMatrix& weight, const Tensor& bias,
                        const PackedMatrix* packed = nullptr);

}  // namespace attn::ops
