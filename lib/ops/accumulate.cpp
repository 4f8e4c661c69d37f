#include "ops/accumulate.h"

#include "core/parallel.h"

namespace attn::ops {

void add_into(float* dst, const float* src, int64_t count, float scale) {
  parallel_for(count, 1, [&](int64_t first, int64_t last) {
#pragma omp simd
    for (int64_t i = first; i < last; ++i) dst[i] += scale * src[i];
  });
}

void scale_into(float* dst, const float* src, int64_t count, float scale) {
  parallel_for(count, 1, [&](int64_t first, int64_t last) {
#pragma omp simd
    for (int64_t i = first; i < last; ++i) dst[i] = scale * src[i];
  });
}

void accumulate_grad(const Tensor& target, const Tensor& values, float scale) {
  ATTN_CHECK(target.shape() == values.shape(), "gradient ", to_string(values.shape()), " does not match ",
             to_string(target.shape()));
  bool fresh = false;
  Tensor grad = target.grad_to_write(&fresh);
  (fresh ? scale_into : add_into)(grad.data(), values.data(), grad.numel(), scale);
}

GradientOutput::GradientOutput(const Tensor& target) : target_(target) {
  Tensor grad = target.grad_to_write(&in_place_);
  output_ = in_place_ ? grad : Tensor::empty(target.shape());
}

void GradientOutput::add_in() const {
  if (!in_place_) accumulate_grad(target_, output_);
}

}  // namespace attn::ops
