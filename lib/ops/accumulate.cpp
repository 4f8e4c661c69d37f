#include "ops/accumulate.h"

#include "core/parallel.h"

namespace attn::ops {

void add_into(float* dst, const float* src, int64_t count, float scale) {
#pragma omp parallel for simd if (count > kParallelWork) schedule(static)
  for (int64_t i = 0; i < count; ++i) dst[i] += scale * src[i];
}

void accumulate_grad(const Tensor& target, const Tensor& values, float scale) {
  ATTN_CHECK(target.shape() == values.shape(), "gradient ", to_string(values.shape()), " does not match ",
             to_string(target.shape()));
  Tensor grad = target.grad();
  add_into(grad.data(), values.data(), grad.numel(), scale);
}

}  // namespace attn::ops
