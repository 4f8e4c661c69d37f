#pragma once
// fast_exp: a branch-free expf that compilers vectorise inside `omp simd` loops (libm's expf
// is a scalar call). GCC vectorises it only with -fno-trapping-math (CMakeLists.txt): under its
// default it may not evaluate a guarded float operation unconditionally, since that could raise
// an FP exception nobody reads. Cephes' method: e^x = 2^n e^r with n = round(x / ln 2), r = x - n ln 2
// (ln 2 split in two constants for precision), e^r by a degree-6 polynomial. Relative error
// about 2e-7 over the f32 range.
//
// exp(x) for x below -87.3 (where f32 turns denormal) is exactly 0, so scores masked with
// kMaskValue (ops/mask.h) get exactly zero weight, as with libm. exp(NaN) is NaN, so a
// diverging step still shows as a non-finite loss.
#include <cstdint>
#include <cstring>

namespace attn {

inline float fast_exp(float x) {
  constexpr float kLog2e = 1.44269504088896341f;
  constexpr float kLn2High = 0.693359375f;
  constexpr float kLn2Low = -2.12194440e-4f;
  constexpr float kUnderflow = -87.3365447504f;  // below: exactly 0
  constexpr float kOverflow = 88.3762626647949f;
  // NaN fails every comparison: it is clamped too (to kOverflow), so that the float -> int
  // conversion and the shift below stay defined, and comes back as NaN at the end.
  float clamped = x < kOverflow ? (x > kUnderflow ? x : kUnderflow) : kOverflow;
  float scaled = clamped * kLog2e + 0.5f;
  int32_t n = static_cast<int32_t>(scaled);
  n -= (static_cast<float>(n) > scaled);  // floor for negative values
  float nf = static_cast<float>(n);
  float r = clamped - nf * kLn2High - nf * kLn2Low;
  float r2 = r * r;
  float poly = 1.9875691500e-4f;
  poly = poly * r + 1.3981999507e-3f;
  poly = poly * r + 8.3334519073e-3f;
  poly = poly * r + 4.1665795894e-2f;
  poly = poly * r + 1.6666665459e-1f;
  poly = poly * r + 5.0000001201e-1f;
  float er = poly * r2 + r + 1.0f;
  int32_t bits = (n + 127) << 23;  // 2^n
  float two_n;
  std::memcpy(&two_n, &bits, sizeof two_n);
  // x < kUnderflow ? 0 : (x is NaN ? x : er * two_n), as bit masks: GCC does not if-convert
  // (so does not vectorise) the nested select of this function, whatever its spelling.
  float product = er * two_n;
  uint32_t product_bits, x_bits;
  std::memcpy(&product_bits, &product, sizeof product_bits);
  std::memcpy(&x_bits, &x, sizeof x_bits);
  uint32_t keep_product = 0u - static_cast<uint32_t>(x >= kUnderflow);  // all ones or 0; NaN: 0
  uint32_t keep_x = 0u - static_cast<uint32_t>(x != x);                 // NaN: all ones
  uint32_t result_bits = (product_bits & keep_product) | (x_bits & keep_x);
  float result;
  std::memcpy(&result, &result_bits, sizeof result);
  return result;
}

// The largest of x[0..n) (n >= 1). The plain comparison vectorises to vmaxps; std::fmax has
// NaN rules that make GCC call libm's fmaxf per element, and std::max in a serial loop is one
// long dependency chain. A NaN may or may not win here, but it reaches the sum of exps and
// makes the result NaN either way.
inline float row_max(const float* x, int64_t n) {
  float best = x[0];
#pragma omp simd reduction(max : best)
  for (int64_t i = 1; i < n; ++i) best = x[i] > best ? x[i] : best;
  return best;
}

}  // namespace attn
