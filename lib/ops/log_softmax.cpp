// log_softmax over the last axis: oneDNN softmax_v2 with algorithm softmax_log (the v2 API's
// successor of logsoftmax_forward/backward, same math), through the kernels in ops/softmax.h.
// Shapes: x, y (..., V) folded to rows (N, V).
#include "ops/log_softmax.h"

#include <cmath>

#include "core/fast_math.h"
#include "ops/softmax.h"

namespace attn::ops {

Tensor log_softmax(Tape& tape, const Tensor& x) {
  ATTN_CHECK(x.rank() >= 1 && x.dim(-1) > 0, "log_softmax: needs a non-empty last axis, got ", to_string(x.shape()));
  Tensor y = Tensor::empty(x.shape());  // (..., V)
  softmax_rows_forward(x, y, SoftmaxKind::log_softmax);

  // dx_j += dy_j - exp(y_j) sum_k dy_k (derived in softmax_rows_backward).
  if (tape.needs_grad(x)) {
    y.set_requires_grad(true);
    tape.record([x = x.grad_only(), y] {
      if (y.has_grad()) softmax_rows_backward(y, x, SoftmaxKind::log_softmax);
    });
  }
  return y;
}

// Decoding reads every row once: an OpenMP loop over rows with fast_exp, in place.
void log_softmax_rows_in_place(Tensor& logits) {
  ATTN_CHECK(logits.rank() == 2, "log_softmax_rows_in_place: needs (R, V), got ", to_string(logits.shape()));
  int64_t rows = logits.dim(0), width = logits.dim(1);
  float* values = logits.data();
#pragma omp parallel for if (rows > 1)
  for (int64_t r = 0; r < rows; ++r) {
    float* row = values + r * width;
    const float max_value = row_max(row, width);
    float sum = 0.f;
#pragma omp simd reduction(+ : sum)
    for (int64_t v = 0; v < width; ++v) sum += fast_exp(row[v] - max_value);
    float log_sum = max_value + std::log(sum);
#pragma omp simd
    for (int64_t v = 0; v < width; ++v) row[v] -= log_sum;
  }
}

}  // namespace attn::ops
