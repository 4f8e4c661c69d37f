#include "core/dtype.h"

#include "core/parallel.h"

namespace attn {

// The loop vectorises: the NaN test of f32_to_bf16 is a select.
void convert_to_bf16(const float* in, uint16_t* out, int64_t count) {
  parallel_for(count, 1, [&](int64_t first, int64_t last) {
#pragma omp simd
    for (int64_t i = first; i < last; ++i) out[i] = f32_to_bf16(in[i]);
  });
}

}  // namespace attn
