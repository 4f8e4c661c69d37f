#include "ops/dropout.h"

#include <cstdint>
#include <memory>

#include "core/buffer.h"
#include "core/dtype.h"
#include "core/parallel.h"

namespace attn::ops {

namespace {

// One byte per element, 1 keeps it and 0 drops it. Pool storage, like the tensors: megabytes
// per layer that the pool's step limit counts and reuses (a std::vector would come from the
// glibc heap, where freed blocks of changing sizes stay fragmented).
using Mask = Buffer;

// Backward of y = x * mask * keep_scale:  dx += dy * mask * keep_scale (= when dx is untouched)
void dropout_backward(const Tensor& x, const Tensor& y, const Mask& mask, float keep_scale) {
  if (!y.has_grad()) return;
  Tensor dy = y.grad();  // x's shape
  const float* g = dy.data();
  bool fresh = false;
  float* dx = x.grad_to_write(&fresh).data();
  const uint8_t* keep = static_cast<const uint8_t*>(mask.data());
  int64_t count = dy.numel();
  if (fresh) {  // nothing to add to: dx is written, not read (Tensor::grad_to_write)
    parallel_for(count, 1, [&](int64_t first, int64_t last) {
#pragma omp simd
      for (int64_t i = first; i < last; ++i) dx[i] = keep[i] ? g[i] * keep_scale : 0.f;
    });
    return;
  }
  parallel_for(count, 1, [&](int64_t first, int64_t last) {
#pragma omp simd
    for (int64_t i = first; i < last; ++i) dx[i] += keep[i] ? g[i] * keep_scale : 0.f;
  });
}

}  // namespace

Tensor dropout(Tape& tape, const Tensor& x, float p, bool training, Rng& rng, DType dtype) {
  ATTN_CHECK(p >= 0.f && p < 1.f, "dropout: probability ", p, " is outside [0, 1)");
  if (!training || p == 0.f) return x;

  int64_t count = x.numel();
  int64_t words = (count + 3) / 4;  // one 64-bit draw gives four 16-bit uniforms
  uint64_t seed = rng.seed();
  // Reserve 4 * words stream values, aligned to whole words: words first .. first + words - 1.
  uint64_t first = (rng.skip(static_cast<uint64_t>(4 * words + 3)) + 3) / 4;
  uint32_t drop_below = static_cast<uint32_t>(p * 65536.f);  // keep when the 16-bit draw >= p * 2^16
  float keep_scale = 1.f / (1.f - p);
  auto mask = std::make_shared<Mask>(size_t(4 * words), false);
  Tensor y = Tensor::empty(x.shape(), dtype);  // x's shape
  const float* px = x.data();
  uint8_t* keep = static_cast<uint8_t*>(mask->data());
  parallel_for(words, 4, [&](int64_t begin, int64_t end) {
    for (int64_t w = begin; w < end; ++w) {
      uint64_t bits = mix64(seed, first + static_cast<uint64_t>(w));
      for (int lane = 0; lane < 4; ++lane) keep[4 * w + lane] = ((bits >> (16 * lane)) & 0xffffu) >= drop_below;
    }
  });
  if (dtype == DType::bf16) {
    uint16_t* py = y.data_bf16();
    parallel_for(count, 1, [&](int64_t begin, int64_t end) {
#pragma omp simd
      for (int64_t i = begin; i < end; ++i) py[i] = f32_to_bf16(keep[i] ? px[i] * keep_scale : 0.f);
    });
  } else {
    float* py = y.data();
    parallel_for(count, 1, [&](int64_t begin, int64_t end) {
#pragma omp simd
      for (int64_t i = begin; i < end; ++i) py[i] = keep[i] ? px[i] * keep_scale : 0.f;
    });
  }
  if (tape.needs_grad(x)) {
    y.set_requires_grad(true);
    tape.record(
        [x = x.grad_only(), y = y.grad_only(), mask, keep_scale] { dropout_backward(x, y, *mask, keep_scale); });
  }
  return y;
}

}  // namespace attn::ops
