// log_softmax over the last axis: oneDNN softmax_v2 with algorithm softmax_log (the v2 API's
// successor of logsoftmax_forward/backward, same math), through the kernels in ops/softmax.h.
// Shapes: x, y (..., V) folded to rows (N, V).
#include "ops/log_softmax.h"

#include <algorithm>
#include <cmath>

#include "core/fast_math.h"
#include "core/parallel.h"
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

namespace {

// log(sum_v exp(row[v])) from the row's maximum: the one sum of both decoding functions below,
// so that they agree to the bit (tests/ops/test_log_softmax.cpp).
float row_log_sum(const float* row, int64_t width, float max_value) {
  float sum = 0.f;
#pragma omp simd reduction(+ : sum)
  for (int64_t v = 0; v < width; ++v) sum += fast_exp(row[v] - max_value);
  return max_value + std::log(sum);
}

void check_rows(const Tensor& logits, const char* name) {
  ATTN_CHECK(logits.rank() == 2 && logits.dim(1) > 0, name, ": needs (R, V), got ", to_string(logits.shape()));
}

}  // namespace

// Decoding reads every row once: a parallel loop over rows with fast_exp, in place.
void log_softmax_rows_in_place(Tensor& logits) {
  check_rows(logits, "log_softmax_rows_in_place");
  int64_t rows = logits.dim(0), width = logits.dim(1);
  float* values = logits.data();
  parallel_for(rows, width, [&](int64_t first, int64_t last) {
    for (int64_t r = first; r < last; ++r) {
      float* row = values + r * width;
      const float log_sum = row_log_sum(row, width, row_max(row, width));
#pragma omp simd
      for (int64_t v = 0; v < width; ++v) row[v] -= log_sum;
    }
  });
}

RowLogSumExp log_sum_exp_rows(const Tensor& logits, int64_t chunk) {
  check_rows(logits, "log_sum_exp_rows");
  ATTN_CHECK(chunk >= 1, "log_sum_exp_rows: chunk ", chunk, " must be >= 1");
  const int64_t rows = logits.dim(0), width = logits.dim(1);
  RowLogSumExp result;
  result.chunks = (width + chunk - 1) / chunk;
  result.log_sum.resize(size_t(rows));
  result.chunk_max.resize(size_t(rows * result.chunks));
  const float* values = logits.data();
  parallel_for(rows, width, [&](int64_t first, int64_t last) {
    for (int64_t r = first; r < last; ++r) {
      const float* row = values + r * width;
      float* maxima = result.chunk_max.data() + r * result.chunks;
      for (int64_t c = 0; c < result.chunks; ++c) {
        const int64_t begin = c * chunk;
        maxima[c] = row_max(row + begin, std::min(chunk, width - begin));
      }
      // The row's maximum from its chunks': max is exact, so it is row_max's own result.
      result.log_sum[r] = row_log_sum(row, width, row_max(maxima, result.chunks));
    }
  });
  return result;
}

}  // namespace attn::ops
