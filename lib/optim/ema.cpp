#include "optim/ema.h"

#include <algorithm>
#include <cstring>

#include "core/parallel.h"

namespace attn::optim {

Ema::Ema(ParameterStore& store, float decay) : store_(store), decay_(decay) {
  ATTN_CHECK(store.finalized(), "the weights' moving average needs a finalized parameter store");
  ATTN_CHECK(decay >= 0.f && decay < 1.f, "the moving average's decay must be in [0, 1), got ", decay);
  average_ = Tensor::empty(Shape{static_cast<int64_t>(store.size())});
  std::memcpy(average_.data(), store.values(), store.size() * sizeof(float));
}

void Ema::update() {
  const float decay = decay_, rest = 1.f - decay_;
  const float* weights = store_.values();
  float* average = average_.data();
  const int64_t n = static_cast<int64_t>(store_.size());
  parallel_for(n, 1, kParallelPass, [&](int64_t first, int64_t last) {
#pragma omp simd
    for (int64_t i = first; i < last; ++i) average[i] = decay * average[i] + rest * weights[i];
  });
}

void Ema::swap_with_store() { std::swap_ranges(store_.values(), store_.values() + store_.size(), average_.data()); }

}  // namespace attn::optim
