#include "optim/adam.h"

#include <cmath>

#include "core/parallel.h"

namespace attn::optim {

Adam::Adam(ParameterStore& store, AdamOptions options) : store_(store), options_(options) {
  ATTN_CHECK(store.finalized(), "Adam needs a finalized parameter store");
  ATTN_CHECK(options.beta1 >= 0.f && options.beta1 < 1.f, "Adam beta1 must be in [0, 1), got ", options.beta1);
  ATTN_CHECK(options.beta2 >= 0.f && options.beta2 < 1.f, "Adam beta2 must be in [0, 1), got ", options.beta2);
  ATTN_CHECK(options.epsilon >= 0.f, "Adam epsilon must be >= 0, got ", options.epsilon);
  ATTN_CHECK(options.weight_decay >= 0.f, "Adam weight_decay must be >= 0, got ", options.weight_decay);
  const Shape flat{static_cast<int64_t>(store.size())};
  first_moment_ = Tensor::zeros(flat);
  second_moment_ = Tensor::zeros(flat);
}

void Adam::set_step_count(int64_t step_count) {
  ATTN_CHECK(step_count >= 0, "Adam step count must be >= 0, got ", step_count);
  step_count_ = step_count;
}

void Adam::step(float learning_rate) {
  ATTN_CHECK(std::isfinite(learning_rate) && learning_rate >= 0.f, "Adam learning rate must be finite and >= 0, got ",
             learning_rate);
  ++step_count_;
  const float beta1 = options_.beta1;
  const float beta2 = options_.beta2;
  const float epsilon = options_.epsilon;
  // The bias corrections 1 - beta^t in double: for beta2 = 0.98 and small t they are tiny.
  const double correction1 = 1.0 - std::pow(double(beta1), double(step_count_));
  const double correction2 = 1.0 - std::pow(double(beta2), double(step_count_));
  // lr * m_hat / (sqrt(v_hat) + eps) == step_size * m / (sqrt(v) * inv_sqrt_c2 + eps)
  const float step_size = static_cast<float>(learning_rate / correction1);
  const float inv_sqrt_correction2 = static_cast<float>(1.0 / std::sqrt(correction2));
  const float l2 = options_.decoupled_weight_decay ? 0.f : options_.weight_decay;
  const float decay = options_.decoupled_weight_decay ? 1.f - learning_rate * options_.weight_decay : 1.f;

  float* params = store_.values();      // (size())
  const float* grads = store_.grads();  // (size())
  float* m = first_moment_.data();      // (size())
  float* v = second_moment_.data();     // (size())
  const int64_t count = static_cast<int64_t>(store_.size());
  // Per element: four arrays read, three written, a square root and a division.
  parallel_for(count, 4, [&](int64_t first, int64_t last) {
#pragma omp simd
    for (int64_t i = first; i < last; ++i) {
      const float p = params[i];
      const float g = grads[i] + l2 * p;
      m[i] = beta1 * m[i] + (1.f - beta1) * g;
      v[i] = beta2 * v[i] + (1.f - beta2) * g * g;
      params[i] = decay * p - step_size * m[i] / (std::sqrt(v[i]) * inv_sqrt_correction2 + epsilon);
    }
  });
}

}  // namespace attn::optim
