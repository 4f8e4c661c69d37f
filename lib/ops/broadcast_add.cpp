// broadcast_add. Shapes: a, y (B, S, D); r (B, D).
#include "ops/broadcast_add.h"

#include "ops/accumulate.h"

namespace attn::ops {

namespace {

// Backward of y[b, s, :] = a[b, s, :] + r[b, :]:
//   da += dy,   dr[b, :] += sum_s dy[b, s, :]
void broadcast_add_backward(const Tensor& a, const Tensor& r, const Tensor& y) {
  if (!y.has_grad()) return;
  Tensor dy = y.grad();  // (B, S, D)
  if (a.requires_grad()) add_into(a.grad().data(), dy.data(), dy.numel(), 1.f);
  if (!r.requires_grad()) return;
  int64_t batch = y.dim(0), positions = y.dim(1), width = y.dim(2);
  const float* g = dy.data();
  float* dr = r.grad().data();  // (B, D)
#pragma omp parallel for if (y.numel() > 32768) schedule(static)
  for (int64_t b = 0; b < batch; ++b)
    for (int64_t s = 0; s < positions; ++s) {
      const float* row = g + (b * positions + s) * width;
#pragma omp simd
      for (int64_t j = 0; j < width; ++j) dr[b * width + j] += row[j];
    }
}

}  // namespace

Tensor broadcast_add(Tape& tape, const Tensor& a, const Tensor& r) {
  ATTN_CHECK(a.rank() == 3 && r.rank() == 2 && r.dim(0) == a.dim(0) && r.dim(1) == a.dim(2), "broadcast_add: r ",
             to_string(r.shape()), " is not (B, D) of a ", to_string(a.shape()), " (B, S, D)");
  int64_t batch = a.dim(0), positions = a.dim(1), width = a.dim(2);
  Tensor y = Tensor::empty(a.shape());  // (B, S, D)
  const float* pa = a.data();
  const float* pr = r.data();
  float* py = y.data();
#pragma omp parallel for collapse(2) if (y.numel() > 32768) schedule(static)
  for (int64_t b = 0; b < batch; ++b)
    for (int64_t s = 0; s < positions; ++s) {
      int64_t offset = (b * positions + s) * width;
#pragma omp simd
      for (int64_t j = 0; j < width; ++j) py[offset + j] = pa[offset + j] + pr[b * width + j];
    }

  if (tape.needs_grad(a, r)) {
    y.set_requires_grad(true);
    tape.record([a, r, y] { broadcast_add_backward(a, r, y); });
  }
  return y;
}

}  // namespace attn::ops
