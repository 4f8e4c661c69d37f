#include "core/init.h"

#include <algorithm>
#include <cmath>

#include "core/parallel.h"

namespace attn::init {

namespace {

constexpr double kTwoPi = 6.283185307179586;

// U(-bound, bound) from stream index `first + i`.
void fill_uniform(Tensor& tensor, Rng& rng, float bound) {
  float* values = tensor.data();  // (N)
  const int64_t count = tensor.numel();
  const uint64_t seed = rng.seed();
  const uint64_t first = rng.skip(static_cast<uint64_t>(count));
  parallel_for(count, 1, kParallelPass, [&](int64_t begin, int64_t end) {
    for (int64_t i = begin; i < end; ++i) values[i] = bound * (2.f * uniform_at(seed, first + i) - 1.f);
  });
}

}  // namespace

Initializer constant(float value) {
  return [value](Tensor& tensor, Rng&) { tensor.fill(value); };
}

Initializer zeros() { return constant(0.f); }
Initializer ones() { return constant(1.f); }

Initializer normal(float stddev) {
  ATTN_CHECK(stddev >= 0.f, "init::normal needs stddev >= 0, got ", stddev);
  return [stddev](Tensor& tensor, Rng& rng) {
    float* values = tensor.data();  // (N)
    const int64_t count = tensor.numel();
    const uint64_t seed = rng.seed();
    const uint64_t first = rng.skip(2 * static_cast<uint64_t>(count));
    // Box-Muller on the pair of stream values (2i, 2i+1); 1 - u keeps log's argument in (0, 1].
    parallel_for(count, 1, kParallelPass, [&](int64_t begin, int64_t end) {
      for (int64_t i = begin; i < end; ++i) {
        double u1 = 1.0 - uniform_at(seed, first + 2 * i);
        double u2 = uniform_at(seed, first + 2 * i + 1);
        values[i] = static_cast<float>(stddev * std::sqrt(-2.0 * std::log(u1)) * std::cos(kTwoPi * u2));
      }
    });
  };
}

Initializer uniform(float bound) {
  ATTN_CHECK(bound >= 0.f, "init::uniform needs bound >= 0, got ", bound);
  return [bound](Tensor& tensor, Rng& rng) { fill_uniform(tensor, rng, bound); };
}

Initializer xavier_uniform() {
  return [](Tensor& tensor, Rng& rng) {
    ATTN_CHECK(tensor.rank() >= 2, "init::xavier_uniform needs an (out, in) weight, got shape ",
               to_string(tensor.shape()));
    const int64_t receptive = tensor.numel() / std::max<int64_t>(1, tensor.dim(0) * tensor.dim(1));
    const double fan_out = double(tensor.dim(0)) * receptive;
    const double fan_in = double(tensor.dim(1)) * receptive;
    const double fans = fan_in + fan_out;
    fill_uniform(tensor, rng, fans > 0 ? static_cast<float>(std::sqrt(6.0 / fans)) : 0.f);
  };
}

}  // namespace attn::init
