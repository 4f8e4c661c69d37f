#include "layers/run_context.h"

#include "dnnl/context.h"
#include "ops/dropout.h"

namespace attn::layers {

Tensor RunContext::dropout(const Tensor& x, float p, DType dtype) const {
  if (!training || p == 0.f) return x;
  ATTN_CHECK(rng, "dropout in training needs a generator");
  return ops::dropout(tape, x, p, true, *rng, dtype);
}

DType RunContext::matmul_input_dtype() const {
  bool bf16 = training && dnn::Context::get().matmul_precision() == dnn::MatmulPrecision::bf16;
  return bf16 ? DType::bf16 : DType::f32;
}

}  // namespace attn::layers
