#pragma once
// Gradient accumulation kernels shared by the ops' backward passes. Gradients always add
// (a tensor used twice receives both contributions), so every backward ends in one of these;
// the first contribution to a gradient nobody has touched overwrites it instead of adding to
// zeros (Tensor::grad_to_write).
#include <cstdint>

#include "core/tensor.h"

namespace attn::ops {

// dst[i] += scale * src[i]
void add_into(float* dst, const float* src, int64_t count, float scale = 1.f);
// dst[i] = scale * src[i]
void scale_into(float* dst, const float* src, int64_t count, float scale = 1.f);
// grad(target) += scale * values (= when it is untouched); checks the shapes agree.
void accumulate_grad(const Tensor& target, const Tensor& values, float scale = 1.f);

// Where a backward that overwrites its output (oneDNN's diff_src) writes d(target): the
// gradient itself when nothing has touched it yet (Tensor::grad_to_write), otherwise scratch
// of the target's shape, which add_in() then adds to the gradient.
class GradientOutput {
 public:
  explicit GradientOutput(const Tensor& target);
  const Tensor& tensor() const { return output_; }  // write all of it
  void add_in() const;

 private:
  Tensor target_;
  Tensor output_;
  bool in_place_ = false;
};

}  // namespace attn::ops
