#pragma once
// linear: y = x W^T + b, the affine map of every projection layer.
//
// Shapes: x (..., K), weight (N, K), bias (N) or undefined -> y (..., N).
#include "autograd/tape.h"
#include "core/matmul_weight.h"
#include "core/parameter_store.h"
#include "core/tensor.h"

namespace attn::ops {

// out (N) += the column sums of dy (M, N), row-major: a bias's gradient. The threads take blocks
// of columns and each column is summed in row order, so the sums do not depend on the thread
// count.
void add_column_sums(const float* dy, int64_t rows, int64_t cols, float* out);

Tensor linear(Tape& tape, const Tensor& x, const Tensor& weight, const Tensor& bias);

// The same with the form of `weight` its store prepared (core/matmul_weight.h): f32 is the
// function above; bf16 multiplies with the bf16 copy (x converted once, kept in bf16
// for the backward; dW goes to the f32 parameter): bf16 decoding and bf16 training; int8
// (ops/quantized_linear.h) is for decoding and refuses a tape that wants gradients.
// A packed weight (decoding, bf16 training) serves the forward product; the backward reads the
// plain form.
Tensor linear(Tape& tape, const Tensor& x, const MatmulWeight& weight, const Tensor& bias);

// y = relu(x W^T + b), the same with every form of W. The matmul applies the ReLU as a post-op
// (no pass of its own over y), and the backward masks dy by y > 0 in place before its products.
// The values are those of ops::relu(linear(...)), bit for bit.
Tensor linear_relu(Tape& tape, const Tensor& x, const MatmulWeight& weight, const Tensor& bias);

// Packs the prepared form (f32, bf16 or the s8 values of int8) of every matmul weight of
// `store` but `except` (ops::pack_weight): the copies do not follow later changes of the values
// (prepare_matmul_weights drops them).
void pack_matmul_weights(ParameterStore& store, const MatmulWeight* except = nullptr);

}  // namespace attn::ops
