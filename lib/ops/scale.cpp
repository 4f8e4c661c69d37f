#include "ops/scale.h"

#include "ops/accumulate.h"

namespace attn::ops {

Tensor scale(Tape& tape, const Tensor& x, float factor) {
  Tensor y = Tensor::empty(x.shape());  // x's shape
  scale_into(y.data(), x.data(), y.numel(), factor);

  if (tape.needs_grad(x)) {
    y.set_requires_grad(true);
    tape.record([x = x.grad_only(), y = y.grad_only(), factor] {
      if (y.has_grad()) accumulate_grad(x, y.grad(), factor);  // dx += factor dy
    });
  }
  return y;
}

}  // namespace attn::ops
