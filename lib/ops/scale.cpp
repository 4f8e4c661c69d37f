#include "ops/scale.h"

#include "core/parallel.h"
#include "ops/accumulate.h"

namespace attn::ops {

namespace {

// Backward of y = factor x + value:  dx += factor dy
void affine_backward(const Tensor& x, const Tensor& y, float factor) {
  if (!y.has_grad()) return;
  Tensor dy = y.grad();  // x's shape
  add_into(x.grad().data(), dy.data(), dy.numel(), factor);
}

}  // namespace

Tensor affine(Tape& tape, const Tensor& x, float factor, float value) {
  Tensor y = Tensor::empty(x.shape());  // x's shape
  const float* px = x.data();
  float* py = y.data();
  int64_t count = y.numel();
#pragma omp parallel for simd if (count > kParallelWork) schedule(static)
  for (int64_t i = 0; i < count; ++i) py[i] = factor * px[i] + value;

  if (tape.needs_grad(x)) {
    y.set_requires_grad(true);
    tape.record([x, y, factor] { affine_backward(x, y, factor); });
  }
  return y;
}

Tensor scale(Tape& tape, const Tensor& x, float factor) { return affine(tape, x, factor, 0.f); }

Tensor add_scalar(Tape& tape, const Tensor& x, float value) { return affine(tape, x, 1.f, value); }

}  // namespace attn::ops
