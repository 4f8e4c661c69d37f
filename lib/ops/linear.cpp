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

// What the backward of y = x W^T + b multiplies with: the values of x (M, K) and W (N, K) as
// the forward used them (f32, or the bf16 copies), and the tensors whose gradients it adds to.
struct LinearOperands {
  Tensor x_values;       // (M, K), f32 or bf16
  Tensor x;              // (M, K): its gradient slot (the values may be gone)
  Tensor weight_values;  // (N, K), f32 or bf16
  Tensor weight;         // (N, K): the f32 parameter
  Tensor bias;           // (N) or undefined
};

// Backward of y = x W^T + b with x folded to (M, K):
//   dx += dy W        (M,N) x (N,K)
//   dW += dy^T x      (N,M) x (M,K)
//   db += sum_rows dy
// In bf16, dy is converted once for both products.
void linear_backward(const LinearOperands& in, const Tensor& y) {
  if (!y.has_grad()) return;
  Tensor dy = y.grad();
  MatrixView dy_view = MatrixView::of(dy);
  Tensor dy_bf16;
  if (in.x_values.dtype() == DType::bf16) {
    dy_bf16 = bf16_copy(dy_view);
    dy_view = MatrixView::of(dy_bf16);
  }
  if (in.x.requires_grad()) {
    GradientTarget dx = gradient_target(in.x);
    gemm(dy_view, MatrixView::of(in.weight_values), dx.view, dx.options);
  }
  if (in.weight.requires_grad()) {
    GradientTarget dw = gradient_target(in.weight);
    gemm(dy_view.transposed(), MatrixView::of(in.x_values), dw.view, dw.options);
  }
  if (in.bias.defined() && in.bias.requires_grad()) add_column_sums(dy, in.bias.grad());
}

void check_fits(const Tensor& x, const Tensor& weight, const Tensor& bias) {
  ATTN_CHECK(weight.rank() == 2 && x.rank() >= 1 && x.dim(-1) == weight.dim(1), "linear: input ", to_string(x.shape()),
             " does not fit weight ", to_string(weight.shape()));
  ATTN_CHECK(!bias.defined() || bias.shape() == Shape{weight.dim(0)}, "linear: bias ",
             bias.defined() ? to_string(bias.shape()) : "", " does not fit weight ", to_string(weight.shape()));
}

// y (M, N) with x's leading dims again: (..., N).
Tensor unfolded(const Tensor& y, const Tensor& x) {
  Shape shape = x.shape();
  shape.back() = y.dim(1);
  return y.view(shape);
}

// y = x W^T + b with the weight's values in `weight_values` (the f32 parameter or its bf16
// copy); with a bf16 copy, x is converted to bf16 once and the backward keeps that copy instead
// of the f32 x (half the memory; the dW product needs nothing else).
Tensor linear_with(Tape& tape, const Tensor& x_in, const Tensor& weight_values, const Tensor& weight,
                   const Tensor& bias) {
  check_fits(x_in, weight_values, bias);
  int64_t in_features = weight_values.dim(1), out_features = weight_values.dim(0);
  Tensor x = x_in.view({x_in.numel() / in_features, in_features});  // (M, K)
  bool bf16 = weight_values.dtype() == DType::bf16 && x.dtype() == DType::f32;
  Tensor x_values = bf16 ? bf16_copy(MatrixView::of(x)) : x;
  Tensor y = Tensor::empty({x.dim(0), out_features});  // (M, N)
  gemm(MatrixView::of(x_values), MatrixView::of(weight_values).transposed(), MatrixView::of(y),
       GemmOptions::overwrite(1.f, bias.defined() ? bias.data() : nullptr));

  if (tape.needs_grad(x, weight, bias)) {
    y.set_requires_grad(true);
    LinearOperands operands{x_values, bf16 ? x.grad_only() : x, weight_values, weight, bias};
    tape.record([operands, y = y.grad_only()] { linear_backward(operands, y); });
  }
  return unfolded(y, x_in);
}

// The f32 or bf16 values of a weight that is not int8: what decoding packs and multiplies.
const Tensor& float_form(const MatmulWeight& weight) {
  return weight.precision == Precision::bf16 ? weight.bf16 : weight.f32;
}

// y = x W^T + b with the packed form of W; undefined when oneDNN has no fast kernel for it.
Tensor linear_packed(const Tensor& x_in, const MatmulWeight& weight, const Tensor& bias) {
  const Tensor& values = float_form(weight);
  check_fits(x_in, values, bias);
  int64_t in_features = values.dim(1), out_features = values.dim(0);
  Tensor x = x_in.view({x_in.numel() / in_features, in_features});  // (M, K)
  Tensor y = Tensor::empty({x.dim(0), out_features});               // (M, N)
  if (!gemm_packed(MatrixView::of(x), *weight.packed, MatrixView::of(y),
                   GemmOptions::overwrite(1.f, bias.defined() ? bias.data() : nullptr)))
    return Tensor();
  return unfolded(y, x_in);
}

}  // namespace

Tensor linear(Tape& tape, const Tensor& x, const Tensor& weight, const Tensor& bias) {
  return linear_with(tape, x, weight, weight, bias);
}

Tensor linear(Tape& tape, const Tensor& x, const MatmulWeight& weight, const Tensor& bias) {
  if (weight.precision == Precision::int8) {
    ATTN_CHECK(!tape.needs_grad(x, weight.f32, bias),
               "linear: int8 weights are for decoding; training multiplies in f32 or bf16");
    return quantized_linear(x, weight.int8, bias, weight.packed.get());
  }
  if (weight.packed && !tape.needs_grad(x, weight.f32, bias)) {
    Tensor y = linear_packed(x, weight, bias);
    if (y.defined()) return y;
  }
  if (weight.precision == Precision::bf16) return linear_with(tape, x, weight.bf16, weight.f32, bias);
  return linear(tape, x, weight.f32, bias);
}

void pack_matmul_weights(ParameterStore& store) {
  store.for_each_matmul_weight([](MatmulWeight& weight) {
    weight.packed = pack_weight(weight.precision == Precision::int8 ? weight.int8.values : float_form(weight));
  });
}

}  // namespace attn::ops
