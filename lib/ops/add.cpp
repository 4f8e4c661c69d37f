#include "ops/add.h"

#include <algorithm>

#include "core/parallel.h"
#include "ops/accumulate.h"

namespace attn::ops {

namespace {

// True when b's shape equals a's last b.rank() dims (b repeats over a's leading axes).
bool is_trailing_shape(const Shape& a, const Shape& b) {
  return b.size() <= a.size() && std::equal(b.rbegin(), b.rend(), a.rbegin());
}

// y[r, j] = alpha a[r, j] + beta b[j] over `repeats` rows of `inner` elements. The pieces cut
// the flat index, not the rows: repeats is 1 for two tensors of one shape.
void add_forward(const float* a, const float* b, float* y, int64_t repeats, int64_t inner, float alpha, float beta) {
  parallel_for(repeats * inner, 1, [&](int64_t first, int64_t last) {
    for (int64_t i = first; i < last;) {
      const int64_t row = i - i % inner, end = std::min(last, row + inner);
#pragma omp simd
      for (int64_t k = i; k < end; ++k) y[k] = alpha * a[k] + beta * b[k - row];
      i = end;
    }
  });
}

// db[j] += beta sum_r dy[r, j]: a repeated operand receives the sum over its repeats.
void add_repeat_sums(const float* dy, float* db, int64_t repeats, int64_t inner, float beta) {
  parallel_for(inner, repeats, [&](int64_t first, int64_t last) {
    for (int64_t j = first; j < last; ++j) {
      float sum = 0.f;
      for (int64_t r = 0; r < repeats; ++r) sum += dy[r * inner + j];
      db[j] += beta * sum;
    }
  });
}

// Backward of y = alpha a + beta b (b repeated `repeats` times):
//   da += alpha dy,   db[j] += beta sum_r dy[r, j]
void add_backward(const Tensor& a, const Tensor& b, const Tensor& y, float alpha, float beta) {
  if (!y.has_grad()) return;
  Tensor dy = y.grad();  // a's shape
  if (a.requires_grad()) accumulate_grad(a, dy, alpha);
  if (!b.requires_grad()) return;
  int64_t inner = b.numel();
  if (inner == dy.numel())
    add_into(b.grad().data(), dy.data(), inner, beta);
  else
    add_repeat_sums(dy.data(), b.grad().data(), inner ? dy.numel() / inner : 0, inner, beta);
}

}  // namespace

Tensor add(Tape& tape, const Tensor& a, const Tensor& b, float alpha, float beta) {
  ATTN_CHECK(is_trailing_shape(a.shape(), b.shape()), "add: b ", to_string(b.shape()),
             " is neither a's shape nor a's trailing dims ", to_string(a.shape()));
  int64_t inner = b.numel();
  int64_t repeats = inner ? a.numel() / inner : 0;
  Tensor y = Tensor::empty(a.shape());  // a's shape
  add_forward(a.data(), b.data(), y.data(), repeats, inner, alpha, beta);

  if (tape.needs_grad(a, b)) {
    y.set_requires_grad(true);
    tape.record(
        [a = a.grad_only(), b = b.grad_only(), y = y.grad_only(), alpha, beta] { add_backward(a, b, y, alpha, beta); });
  }
  return y;
}

Tensor sub(Tape& tape, const Tensor& a, const Tensor& b) { return add(tape, a, b, 1.f, -1.f); }

}  // namespace attn::ops
