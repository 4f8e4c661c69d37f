#pragma once
// quantized_linear: y = x W^T + b in int8, for decoding (no backward).
//
// Each row of x is quantised on the fly to s8 with its own scale (max |x_i| / 127), multiplied
// with the s8 weight on oneDNN's int8 matmul (s32 accumulation, exact), and the s32 result is
// scaled back in f32: y[i][n] = acc[i][n] * x_scale[i] * w_scale[n] + b[n]. The weight's scales
// are the matmul's per-column output scales; the row scales and the bias are one pass after.
// Error: |y - x W^T| <= sum_k (|x_k| w_scale[n] / 2 + |W_nk| x_scale / 2 + x_scale w_scale / 4)
// per element (each operand is off by at most half its step); tests/ops check this bound.
//
// oneDNN 2.6 on AVX2 (no VNNI) runs this as "gemm:jit" (ONEDNN_VERBOSE=1); with AVX512-VNNI
// the same primitive uses VNNI. Shapes: x (..., K), weight (N, K), bias (N) or undefined.
#include "core/quantized_matrix.h"

namespace attn::ops {

Tensor quantized_linear(const Tensor& x, const QuantizedMatrix& weight, const Tensor& bias);

}  // namespace attn::ops
