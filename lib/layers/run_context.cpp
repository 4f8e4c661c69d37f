#include "layers/run_context.h"

#include "ops/dropout.h"

namespace attn::layers {

Tensor RunContext::dropout(const Tensor& x, float p, DType dtype) const {
  if (!training || p == 0.f) return x;
  ATTN_CHECK(rng, "dropout in training needs a generator");
  return ops::dropout(tape, x, p, true, *rng, dtype);
}

DType RunContext::matmul_input_dtype() const {
  return training && precision == Precision::bf16 ? DType::bf16 : DType::f32;
}

}  // namespace attn::layers
