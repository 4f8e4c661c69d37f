// Fused log-softmax + label-smoothed cross-entropy, as parallel loops over rows.
// Shapes: logits (N, V); targets (N); logsumexp (N); loss (1).
#include "ops/cross_entropy.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "core/fast_math.h"
#include "core/parallel.h"

namespace attn::ops {

namespace {

struct Sums {
  double loss = 0.0;
  double nll = 0.0;
  int64_t tokens = 0;
  Sums& operator+=(const Sums& other) {
    loss += other.loss;
    nll += other.nll;
    tokens += other.tokens;
    return *this;
  }
};

void check_targets(const Tensor& logits, const std::vector<int32_t>& targets, int32_t pad_id) {
  int64_t rows = logits.dim(0), vocab = logits.dim(1);
  ATTN_CHECK(static_cast<int64_t>(targets.size()) == rows, "cross_entropy: ", targets.size(), " targets for ", rows,
             " rows of logits ", to_string(logits.shape()));
  for (int64_t r = 0; r < rows; ++r) {
    int32_t id = targets[r];
    ATTN_CHECK(id == pad_id || (id >= 0 && id < vocab), "cross_entropy: target id ", id, " at row ", r,
               " is outside the vocabulary [0, ", vocab, ")");
  }
}

// The largest value and the sum of one row, in one pass over it (the logits are the largest
// tensor of a step: every pass over them is felt).
struct RowStats {
  float max;
  float sum;
};

RowStats row_max_and_sum(const float* x, int64_t vocab) {
  float best = x[0], sum = 0.f;
#pragma omp simd reduction(max : best) reduction(+ : sum)
  for (int64_t j = 0; j < vocab; ++j) {
    best = x[j] > best ? x[j] : best;
    sum += x[j];
  }
  return {best, sum};
}

// logsumexp of one row, shifted by its max so that exp never overflows.
float row_logsumexp(const float* x, int64_t vocab, float max) {
  float sum = 0.f;
#pragma omp simd reduction(+ : sum)
  for (int64_t j = 0; j < vocab; ++j) sum += fast_exp(x[j] - max);
  return max + std::log(sum);
}

// With log p_j = x_j - lse:  nll = lse - x_y,  -sum_j (1/V) log p_j = lse - mean_j x_j,
// smoothed row loss = (1 - eps) nll + eps (lse - mean_j x_j). Writes lse per row.
Sums forward_rows(const Tensor& logits, const std::vector<int32_t>& targets, const CrossEntropyOptions& options,
                  float* lse) {
  int64_t rows = logits.dim(0), vocab = logits.dim(1);
  const float* x = logits.data();
  double eps = options.label_smoothing;
  return parallel_sum<Sums>(rows, vocab, kParallelWork, [&](int64_t first, int64_t last) {
    Sums sums;
    for (int64_t r = first; r < last; ++r) {
      if (targets[r] == options.pad_id) continue;
      const float* row = x + r * vocab;
      const RowStats stats = row_max_and_sum(row, vocab);
      lse[r] = row_logsumexp(row, vocab, stats.max);
      double row_nll = double(lse[r]) - row[targets[r]];
      double row_uniform = double(lse[r]) - double(stats.sum) / double(vocab);
      sums.loss += (1.0 - eps) * row_nll + eps * row_uniform;
      sums.nll += row_nll;
      ++sums.tokens;
    }
    return sums;
  });
}

// d loss / d x_j = dloss * (p_j - q_j) with p_j = exp(x_j - lse), q_j = eps/V + (1-eps)[j == y];
// pad rows get nothing (their gradient stays exactly zero). Adds into `dx`, or writes it when
// `overwrite` (dx may then be x itself: each element is read before it is written).
void cross_entropy_rows_backward(const float* x, const std::vector<int32_t>& targets, const float* row_lse,
                                 int64_t rows, int64_t vocab, float dloss, const CrossEntropyOptions& options,
                                 bool overwrite, float* dx) {
  float eps = options.label_smoothing;
  float uniform = eps / float(vocab);
  parallel_for(rows, vocab, [&](int64_t first, int64_t last) {
    for (int64_t r = first; r < last; ++r) {
      float* drow = dx + r * vocab;
      if (targets[r] == options.pad_id) {
        if (overwrite) std::fill(drow, drow + vocab, 0.f);
        continue;
      }
      const float* row = x + r * vocab;
      if (overwrite) {
#pragma omp simd
        for (int64_t j = 0; j < vocab; ++j) drow[j] = dloss * (fast_exp(row[j] - row_lse[r]) - uniform);
      } else {
#pragma omp simd
        for (int64_t j = 0; j < vocab; ++j) drow[j] += dloss * (fast_exp(row[j] - row_lse[r]) - uniform);
      }
      drow[targets[r]] -= dloss * (1.f - eps);
    }
  });
}

void cross_entropy_backward(Tensor logits, const std::vector<int32_t>& targets, const Tensor& lse, const Tensor& loss,
                            const CrossEntropyOptions& options) {
  if (!loss.has_grad()) return;
  float dloss = loss.grad().item();
  int64_t rows = logits.dim(0), vocab = logits.dim(1);
  if (options.overwrite_logits && !logits.has_grad()) {
    cross_entropy_rows_backward(logits.data(), targets, lse.data(), rows, vocab, dloss, options, true, logits.data());
    logits.reuse_data_as_grad();
    return;
  }
  cross_entropy_rows_backward(logits.data(), targets, lse.data(), rows, vocab, dloss, options, false,
                              logits.grad().data());
}

}  // namespace

CrossEntropyResult cross_entropy(Tape& tape, const Tensor& logits_in, const std::vector<int32_t>& targets,
                                 const CrossEntropyOptions& options) {
  ATTN_CHECK(logits_in.rank() >= 1 && logits_in.dim(-1) > 0, "cross_entropy: logits need a non-empty last axis, got ",
             to_string(logits_in.shape()));
  ATTN_CHECK(options.label_smoothing >= 0.f && options.label_smoothing < 1.f, "cross_entropy: label_smoothing ",
             options.label_smoothing, " is outside [0, 1)");
  int64_t vocab = logits_in.dim(-1);
  Tensor logits = logits_in.view({logits_in.numel() / vocab, vocab});  // (N, V)
  check_targets(logits, targets, options.pad_id);

  Tensor lse = Tensor::empty({logits.dim(0)});  // (N), unused on pad rows
  Sums sums = forward_rows(logits, targets, options, lse.data());
  Tensor loss = Tensor::full({1}, float(sums.loss));  // (1)

  if (tape.needs_grad(logits)) {
    loss.set_requires_grad(true);
    tape.record([logits, targets, lse, loss = loss.grad_only(), options] {
      cross_entropy_backward(logits, targets, lse, loss, options);
    });
  }
  return CrossEntropyResult{loss, sums.nll, sums.tokens};
}

}  // namespace attn::ops
