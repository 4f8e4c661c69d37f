#include "optim/clip.h"

#include <cmath>

namespace attn::optim {

double global_grad_norm(const ParameterStore& store) {
  const float* grads = store.grads();  // (size())
  const int64_t count = static_cast<int64_t>(store.size());
  double sum = 0.0;
#pragma omp parallel for simd reduction(+ : sum) schedule(static)
  for (int64_t i = 0; i < count; ++i) sum += double(grads[i]) * double(grads[i]);
  return std::sqrt(sum);
}

double clip_grad_norm(ParameterStore& store, double max_norm) {
  ATTN_CHECK(max_norm > 0.0, "max gradient norm must be > 0, got ", max_norm);
  const double norm = global_grad_norm(store);
  if (!std::isfinite(norm) || norm <= max_norm) return norm;
  const float scale = static_cast<float>(max_norm / norm);
  float* grads = store.grads();  // (size())
  const int64_t count = static_cast<int64_t>(store.size());
#pragma omp parallel for simd schedule(static)
  for (int64_t i = 0; i < count; ++i) grads[i] *= scale;
  return norm;
}

}  // namespace attn::optim
