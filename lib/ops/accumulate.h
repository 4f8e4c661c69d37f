#pragma once
// Gradient accumulation kernels shared by the ops' backward passes. Gradients always add
// (a tensor used twice receives both contributions), so every backward ends in one of these.
#include <cstdint>

#include "core/tensor.h"

namespace attn::ops {

// dst[i] += scale * src[i]
void add_into(float* dst, const float* src, int64_t count, float scale = 1.f);
// grad(target) += scale * values; checks the shapes agree.
void accumulate_grad(const Tensor& target, const Tensor& values, float scale = 1.f);

}  // namespace attn::ops
