#include "ops/linear.h"

#include <algorithm>

#include "core/parallel.h"
#include "ops/activation.h"
#include "ops/gemm.h"
#include "ops/quantized_linear.h"

namespace attn::ops {

void add_column_sums(const float* dy, int64_t rows, int64_t cols, float* out) {
  constexpr int64_t kBlock = 64;  // columns per work item: a vector loop's worth
  const int64_t blocks = (cols + kBlock - 1) / kBlock;
  parallel_for(blocks, rows * kBlock, [&](int64_t first_block, int64_t last_block) {
    for (int64_t block = first_block; block < last_block; ++block) {
      const int64_t first = block * kBlock, last = std::min(cols, first + kBlock);
      for (int64_t i = 0; i < rows; ++i) {
#pragma omp simd
        for (int64_t j = first; j < last; ++j) out[j] += dy[i * cols + j];
      }
    }
  });
}

namespace {

// dy *= 1[y > 0] in place: the backward of a ReLU the forward's matmul applied. y's gradient has
// no reader but this backward, so it becomes the gradient of the pre-activation. A product, not a
// select, so that a non-finite dy stays non-finite (the trainer skips such steps), as in
// oneDNN's ReLU backward.
void mask_inactive(const Tensor& dy, const Tensor& y) {
  float* g = const_cast<Tensor&>(dy).data();
  const float* values = y.data();
  int64_t count = dy.numel();
  parallel_for(count, 1, [&](int64_t first, int64_t last) {
#pragma omp simd
    for (int64_t i = first; i < last; ++i) g[i] *= values[i] > 0.f ? 1.f : 0.f;
  });
}

// What the backward of y = x W^T + b multiplies with: the values of x (M, K) and W (N, K) as
// the forward used them (f32, or the bf16 copies), and the tensors whose gradients it adds to.
struct LinearOperands {
  Tensor x_values;       // (M, K), f32 or bf16
  Tensor x;              // (M, K): its gradient slot (the values may be gone)
  Tensor weight_values;  // (N, K), f32 or bf16
  Tensor weight;         // (N, K): the f32 parameter
  Tensor bias;           // (N) or undefined
  bool relu = false;     // y = relu(x W^T + b): the backward reads y's values
};

// Backward of y = x W^T + b with x folded to (M, K):
//   dx += dy W        (M,N) x (N,K)
//   dW += dy^T x      (N,M) x (M,K)
//   db += sum_rows dy
// (dy masked by y > 0 first under a ReLU). In bf16, dy is converted once for both products.
void linear_backward(const LinearOperands& in, const Tensor& y) {
  if (!y.has_grad()) return;
  Tensor dy = y.grad();
  if (in.relu) mask_inactive(dy, y);
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
  if (in.bias.defined() && in.bias.requires_grad())
    add_column_sums(dy.data(), dy.dim(0), dy.dim(1), in.bias.grad().data());
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

// y = x W^T + b (relu(...) with `relu`) with the weight's values in `weight_values` (the f32
// parameter or its bf16 copy); with a bf16 copy, x is converted to bf16 once and the backward
// keeps that copy instead of the f32 x (half the memory; the dW product needs nothing else).
// `packed`, when given, is weight_values packed (ops::pack_weight): the forward multiplies with it
// where oneDNN has a fast kernel for it, and the backward's products read weight_values.
Tensor linear_with(Tape& tape, const Tensor& x_in, const Tensor& weight_values, const Tensor& weight,
                   const Tensor& bias, bool relu, const PackedMatrix* packed = nullptr) {
  check_fits(x_in, weight_values, bias);
  int64_t in_features = weight_values.dim(1), out_features = weight_values.dim(0);
  Tensor x = x_in.view({x_in.numel() / in_features, in_features});  // (M, K)
  bool bf16 = weight_values.dtype() == DType::bf16 && x.dtype() == DType::f32;
  Tensor x_values = bf16 ? bf16_copy(MatrixView::of(x)) : x;
  Tensor y = Tensor::empty({x.dim(0), out_features});  // (M, N)
  GemmOptions options = GemmOptions::overwrite(1.f, bias.defined() ? bias.data() : nullptr, relu);
  if (!packed || !gemm_packed(MatrixView::of(x_values), *packed, MatrixView::of(y), options))
    gemm(MatrixView::of(x_values), MatrixView::of(plain_weight(weight_values, packed)).transposed(), MatrixView::of(y),
         options);

  if (tape.needs_grad(x, weight, bias)) {
    y.set_requires_grad(true);
    LinearOperands operands{x_values, bf16 ? x.grad_only() : x, weight_values, weight, bias, relu};
    tape.record([operands, y = relu ? y : y.grad_only()] { linear_backward(operands, y); });
  }
  return unfolded(y, x_in);
}

// linear(x, weight, bias), then relu when asked, with every form of the weight.
Tensor linear_form(Tape& tape, const Tensor& x, const MatmulWeight& weight, const Tensor& bias, bool relu) {
  if (weight.precision == Precision::int8) {
    ATTN_CHECK(!tape.needs_grad(x, weight.f32, bias),
               "linear: int8 weights are for decoding; training multiplies in f32 or bf16");
    Tensor y = quantized_linear(x, weight.int8, bias, weight.packed.get());
    if (relu) activation_in_place(y, Activation::relu);
    return y;
  }
  return linear_with(tape, x, weight.prepared(), weight.f32, bias, relu, weight.packed.get());
}

}  // namespace

Tensor linear(Tape& tape, const Tensor& x, const Tensor& weight, const Tensor& bias) {
  return linear_with(tape, x, weight, weight, bias, false);
}

Tensor linear(Tape& tape, const Tensor& x, const MatmulWeight& weight, const Tensor& bias) {
  return linear_form(tape, x, weight, bias, false);
}

Tensor linear_relu(Tape& tape, const Tensor& x, const MatmulWeight& weight, const Tensor& bias) {
  return linear_form(tape, x, weight, bias, true);
}

void pack_matmul_weights(ParameterStore& store, const MatmulWeight* except) {
  store.for_each_matmul_weight(
      [&](MatmulWeight& weight) { weight.packed = &weight == except ? nullptr : pack_weight(weight.prepared()); });
}

}  // namespace attn::ops
