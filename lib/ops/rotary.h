#pragma once
// rotary: the rotary position embedding of RoFormer (Su et al. 2021), applied to attention heads.
// Each pair of dimensions (2i, 2i+1) of the vector at position p turns by the angle p * theta_i,
// theta_i = base^(-2i / Dh):
//
//   y[2i]     = x[2i] cos(p theta_i) - x[2i+1] sin(p theta_i)
//   y[2i + 1] = x[2i] sin(p theta_i) + x[2i+1] cos(p theta_i)
//
// A query at position m and a key at position n rotated so have the dot product of the
// unrotated pair turned by (m - n) theta_i: the attention scores see only the distance.
// Backward: a rotation's transpose is its inverse, dx = R(-p theta) dy.
//
// Shapes: x (B, H, T, Dh) at positions first .. first + T - 1 (Dh even) -> y (B, H, T, Dh), in
// x's dtype (f32, or bf16 when a matmul is its only reader); gradients are f32.
#include <cstdint>

#include "autograd/tape.h"
#include "core/tensor.h"

namespace attn::ops {

inline constexpr double kRotaryBase = 10000.0;

Tensor rotary(Tape& tape, const Tensor& x, int64_t first, double base = kRotaryBase);

}  // namespace attn::ops
