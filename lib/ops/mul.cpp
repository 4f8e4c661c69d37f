#include "ops/mul.h"

#include "core/parallel.h"

namespace attn::ops {

namespace {

// dst[i] += dy[i] * other[i]
void add_product_into(float* dst, const float* dy, const float* other, int64_t count) {
  parallel_for(count, 1, [&](int64_t first, int64_t last) {
#pragma omp simd
    for (int64_t i = first; i < last; ++i) dst[i] += dy[i] * other[i];
  });
}

// Backward of y = a * b (elementwise):
//   da += dy * b,   db += dy * a
// (for mul(x, x) both lines land in one gradient: dx += 2 x dy)
void mul_backward(const Tensor& a, const Tensor& b, const Tensor& y) {
  if (!y.has_grad()) return;
  Tensor dy = y.grad();  // a's shape
  if (a.requires_grad()) add_product_into(a.grad().data(), dy.data(), b.data(), dy.numel());
  if (b.requires_grad()) add_product_into(b.grad().data(), dy.data(), a.data(), dy.numel());
}

}  // namespace

Tensor mul(Tape& tape, const Tensor& a, const Tensor& b) {
  ATTN_CHECK(a.shape() == b.shape(), "mul: shapes differ: ", to_string(a.shape()), " and ", to_string(b.shape()));
  Tensor y = Tensor::empty(a.shape());  // a's shape
  const float* pa = a.data();
  const float* pb = b.data();
  float* py = y.data();
  int64_t count = y.numel();
  parallel_for(count, 1, [&](int64_t first, int64_t last) {
#pragma omp simd
    for (int64_t i = first; i < last; ++i) py[i] = pa[i] * pb[i];
  });

  if (tape.needs_grad(a, b)) {
    y.set_requires_grad(true);
    tape.record([a, b, y = y.grad_only()] { mul_backward(a, b, y); });
  }
  return y;
}

}  // namespace attn::ops
