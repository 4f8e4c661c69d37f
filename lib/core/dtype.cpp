#include "core/dtype.h"

#include "core/parallel.h"

namespace attn {

// The loop vectorises: the NaN test of f32_to_bf16 is a select.
void convert_to_bf16(const float* in, uint16_t* out, int64_t count) {
#pragma omp parallel for simd if (count > kParallelWork) schedule(static)
  for (int64_t i = 0; i < count; ++i) out[i] = f32_to_bf16(in[i]);
}

}  // namespace attn
