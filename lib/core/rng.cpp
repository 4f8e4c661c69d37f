#include "core/rng.h"

#include <cmath>

namespace attn {

float Rng::normal(float mean, float stddev) {
  // Box-Muller; 1 - u keeps the logarithm's argument in (0, 1].
  float u1 = 1.0f - uniform();
  float u2 = uniform();
  float radius = std::sqrt(-2.0f * std::log(u1));
  return mean + stddev * radius * std::cos(6.2831853071795864f * u2);
}

}  // namespace attn
