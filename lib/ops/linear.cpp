#include "ops/linear.h"

#include "ops/gemm.h"
#include "ops/quantized_linear.h"

namespace attn::ops {

namespace {

// db += column sums of dy (M, N).
void add_column_sums(const Tensor& dy, const Tensor& bias_grad) {
  int64_t rows = dy.dim(0), cols = dy.dim(1);
  const float* g = dy.data();
  float* out = const_cast<Tensor&>(bias_grad).data();
  for (int64_t i = 0; i < rows; ++i) {
#pragma omp simd
    for (int64_t j = 0; j < cols; ++j) out[j] += g[i * cols + j];
  }
}

// Backward of y = x W^T + b with x folded to (M, K):
//   dx += dy W        (M,N) x (N,K)
//   dW += dy^T x      (N,M) x (M,K)
//   db += sum_rows dy
void linear_backward(const Tensor& x, const Tensor& weight, const Tensor& bias, const Tensor& y) {
  if (!y.has_grad()) return;
  Tensor dy = y.grad();
  const GemmOptions add = GemmOptions::accumulating();
  if (x.requires_grad()) gemm(MatrixView::of(dy), MatrixView::of(weight), MatrixView::grad_of(x), add);
  if (weight.requires_grad())
    gemm(MatrixView::of(dy).transposed(), MatrixView::of(x), MatrixView::grad_of(weight), add);
  if (bias.defined() && bias.requires_grad()) add_column_sums(dy, bias.grad());
}

}  // namespace

Tensor linear(Tape& tape, const Tensor& x_in, const Tensor& weight, const Tensor& bias) {
  ATTN_CHECK(weight.rank() == 2 && x_in.rank() >= 1 && x_in.dim(-1) == weight.dim(1), "linear: input ",
             to_string(x_in.shape()), " does not fit weight ", to_string(weight.shape()));
  ATTN_CHECK(!bias.defined() || bias.shape() == Shape{weight.dim(0)}, "linear: bias ",
             bias.defined() ? to_string(bias.shape()) : "", " does not fit weight ", to_string(weight.shape()));
  int64_t in_features = weight.dim(1), out_features = weight.dim(0);
  Tensor x = x_in.view({x_in.numel() / in_features, in_features});  // (M, K)
  Tensor y = Tensor::empty({x.dim(0), out_features});               // (M, N)
  gemm(MatrixView::of(x), MatrixView::of(weight).transposed(), MatrixView::of(y),
       GemmOptions::overwrite(1.f, bias.defined() ? bias.data() : nullptr));

  if (tape.needs_grad(x, weight, bias)) {
    y.set_requires_grad(true);
    tape.record([x, weight, bias, y = y.grad_only()] { linear_backward(x, weight, bias, y); });
  }
  Shape shape = x_in.shape();
  shape.back() = out_features;
  return y.view(shape);
}

Tensor linear(Tape& tape, const Tensor& x, const MatmulWeight& weight, const Tensor& bias) {
  if (weight.precision == Precision::f32) return linear(tape, x, weight.f32, bias);
  ATTN_CHECK(!tape.needs_grad(x, weight.f32, bias), "linear: ", precision_name(weight.precision),
             " weights are for decoding; training multiplies in f32");
  if (weight.precision == Precision::int8) return quantized_linear(x, weight.int8, bias);
  const Tensor& table = weight.bf16;
  ATTN_CHECK(x.rank() >= 1 && x.dim(-1) == table.dim(1), "linear: input ", to_string(x.shape()),
             " does not fit weight ", to_string(table.shape()));
  int64_t in_features = table.dim(1), out_features = table.dim(0);
  Tensor rows = x.view({x.numel() / in_features, in_features});
  Tensor y = Tensor::empty({rows.dim(0), out_features});
  gemm(MatrixView::of(rows), MatrixView::of(table).transposed(), MatrixView::of(y),
       GemmOptions::overwrite(1.f, bias.defined() ? bias.data() : nullptr));
  Shape shape = x.shape();
  shape.back() = out_features;
  return y.view(shape);
}

}  // namespace attn::ops
