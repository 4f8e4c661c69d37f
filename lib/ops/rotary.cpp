#include "ops/rotary.h"

#include <cmath>
#include <vector>

#include "core/parallel.h"
#include "ops/accumulate.h"

namespace attn::ops {

namespace {

// cos and sin of (first + t) * theta_i, (T, Dh / 2) each. The angles are taken in double: at
// position 10^4 an f32 product would already be off by ~1e-3 rad.
struct RotaryAngles {
  int64_t length = 0, pairs = 0;  // T, Dh / 2
  std::vector<float> cos, sin;    // (T, Dh / 2)
};

RotaryAngles rotary_angles(int64_t first, int64_t length, int64_t head_width, double base) {
  RotaryAngles angles{length, head_width / 2, {}, {}};
  angles.cos.resize(size_t(length * angles.pairs));
  angles.sin.resize(angles.cos.size());
  for (int64_t i = 0; i < angles.pairs; ++i) {
    const double theta = std::pow(base, -2.0 * double(i) / double(head_width));
    for (int64_t t = 0; t < length; ++t) {
      const double angle = double(first + t) * theta;
      angles.cos[t * angles.pairs + i] = float(std::cos(angle));
      angles.sin[t * angles.pairs + i] = float(std::sin(angle));
    }
  }
  return angles;
}

inline float load(const float* x, int64_t i) { return x[i]; }
inline float load(const uint16_t* x, int64_t i) { return bf16_to_f32(x[i]); }
inline void store(float* y, int64_t i, float value) { y[i] = value; }
inline void store(uint16_t* y, int64_t i, float value) { y[i] = f32_to_bf16(value); }

// y = R(direction * angle) x over `rows` rows of Dh = 2 * pairs values, row r at position
// r % T; direction -1 is the inverse rotation (the backward).
template <class In, class Out>
void rotate_rows(const In* x, Out* y, int64_t rows, const RotaryAngles& angles, float direction) {
  const int64_t width = 2 * angles.pairs;
  parallel_for(rows, width, [&](int64_t first, int64_t last) {
    for (int64_t r = first; r < last; ++r) {
      const float* cos = angles.cos.data() + (r % angles.length) * angles.pairs;
      const float* sin = angles.sin.data() + (r % angles.length) * angles.pairs;
      const In* in = x + r * width;
      Out* out = y + r * width;
#pragma omp simd
      for (int64_t i = 0; i < angles.pairs; ++i) {
        const float even = load(in, 2 * i), odd = load(in, 2 * i + 1), s = direction * sin[i];
        store(out, 2 * i, even * cos[i] - odd * s);
        store(out, 2 * i + 1, even * s + odd * cos[i]);
      }
    }
  });
}

}  // namespace

Tensor rotary(Tape& tape, const Tensor& x, int64_t first, double base) {
  ATTN_CHECK(x.rank() == 4, "rotary: input must be (B, H, T, Dh), got ", to_string(x.shape()));
  ATTN_CHECK(x.dim(3) % 2 == 0, "rotary: the head width Dh of ", to_string(x.shape()),
             " must be even (the dimensions turn in pairs)");
  ATTN_CHECK(first >= 0, "rotary: negative first position ", first);
  ATTN_CHECK(x.dtype() == DType::f32 || x.dtype() == DType::bf16, "rotary: f32 or bf16 input only");
  const int64_t rows = x.numel() / x.dim(3);
  RotaryAngles angles = rotary_angles(first, x.dim(2), x.dim(3), base);
  Tensor y = Tensor::empty(x.shape(), x.dtype());  // (B, H, T, Dh)
  if (x.dtype() == DType::f32)
    rotate_rows(x.data(), y.data(), rows, angles, 1.f);
  else
    rotate_rows(x.data_bf16(), y.data_bf16(), rows, angles, 1.f);

  if (tape.needs_grad(x)) {
    y.set_requires_grad(true);
    tape.record([x = x.grad_only(), y = y.grad_only(), angles = std::move(angles), rows] {
      if (!y.has_grad() || !x.requires_grad()) return;
      GradientOutput dx(x);         // dx (=|+=) R(-angle) dy
      Tensor target = dx.tensor();  // a handle: writes go to dx's buffer
      rotate_rows(static_cast<const float*>(y.grad().data()), target.data(), rows, angles, -1.f);
      dx.add_in();
    });
  }
  return y;
}

}  // namespace attn::ops
