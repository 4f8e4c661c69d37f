#include "ops/scale.h"

#include "core/parallel.h"
#include "ops/accumulate.h"

namespace attn::ops {

Tensor scale(Tape& tape, const Tensor& x, float factor) {
  Tensor y = Tensor::empty(x.shape());  // x's shape
  const float* px = x.data();
  float* py = y.data();
  int64_t count = y.numel();
#pragma omp parallel for simd if (count > kParallelWork) schedule(static)
  for (int64_t i = 0; i < count; ++i) py[i] = factor * px[i];

  if (tape.needs_grad(x)) {
    y.set_requires_grad(true);
    tape.record([x = x.grad_only(), y = y.grad_only(), factor] {
      if (y.has_grad()) accumulate_grad(x, y.grad(), factor);  // dx += factor dy
    });
  }
  return y;
}

}  // namespace attn::ops
