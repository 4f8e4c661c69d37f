#include "optim/clip.h"

#include <cmath>

#include "core/parallel.h"

namespace attn::optim {

double global_grad_norm(const ParameterStore& store) {
  const float* grads = store.grads();  // (size())
  const int64_t count = static_cast<int64_t>(store.size());
  // The pieces' sums are added in piece order: the norm does not depend on which thread ran what.
  const double sum = parallel_sum<double>(count, 1, kParallelPass, [&](int64_t first, int64_t last) {
    double piece = 0.0;
#pragma omp simd reduction(+ : piece)
    for (int64_t i = first; i < last; ++i) piece += double(grads[i]) * double(grads[i]);
    return piece;
  });
  return std::sqrt(sum);
}

double clip_grad_norm(ParameterStore& store, double max_norm) {
  ATTN_CHECK(max_norm > 0.0, "max gradient norm must be > 0, got ", max_norm);
  const double norm = global_grad_norm(store);
  if (!std::isfinite(norm) || norm <= max_norm) return norm;
  const float scale = static_cast<float>(max_norm / norm);
  float* grads = store.grads();  // (size())
  const int64_t count = static_cast<int64_t>(store.size());
  parallel_for(count, 1, kParallelPass, [&](int64_t first, int64_t last) {
#pragma omp simd
    for (int64_t i = first; i < last; ++i) grads[i] *= scale;
  });
  return norm;
}

}  // namespace attn::optim
