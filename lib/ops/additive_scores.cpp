// additive_scores. Shapes: keys (B, S, A); query (B, A); v (A); scores (B, S).
#include "ops/additive_scores.h"

#include "core/parallel.h"
#include "ops/activation.h"

namespace attn::ops {

namespace {

// t = tanh(keys + query) (B, S, A): a transient buffer, never kept past the op or its backward.
// The tanh is oneDNN's (JIT-vectorised for this CPU), as an unfused tanh op would run it.
Tensor tanh_of_sum(const Tensor& keys, const Tensor& query) {
  int64_t batch = keys.dim(0), positions = keys.dim(1), width = keys.dim(2);
  Tensor t = Tensor::empty(keys.shape());
  const float* k = keys.data();
  const float* q = query.data();
  float* pt = t.data();
  parallel_for(batch * positions, width, [&](int64_t first, int64_t last) {
    for (int64_t bs = first; bs < last; ++bs) {
      const int64_t row = bs * width;
      const float* qb = q + bs / positions * width;
#pragma omp simd
      for (int64_t a = 0; a < width; ++a) pt[row + a] = k[row + a] + qb[a];
    }
  });
  activation_in_place(t, Activation::tanh);
  return t;
}

// With t recomputed:
//   dk[b, s, a] += de[b, s] v[a] (1 - t^2),  dq[b, a] += sum_s of the same,  dv[a] += sum_{b, s} de[b, s] t.
// Rows b run in parallel; dv is summed per row first, then added in row order (deterministic).
// dk and dq are written into scratch rows when an input needs no gradient, so the inner loop
// has no branch.
void additive_scores_backward(const Tensor& keys, const Tensor& query, const Tensor& v, const Tensor& scores) {
  if (!scores.has_grad()) return;
  int64_t batch = keys.dim(0), positions = keys.dim(1), width = keys.dim(2);
  const Tensor t = tanh_of_sum(keys, query);
  const float* pt = t.data();
  const float* pv = v.data();
  const float* de = scores.grad().data();
  // One scratch row per b, so that no two threads share one.
  Tensor unused_dk = keys.requires_grad() ? Tensor() : Tensor::zeros({batch, width});
  Tensor unused_dq = query.requires_grad() ? Tensor() : Tensor::zeros({batch, width});
  float* dk = keys.requires_grad() ? keys.grad().data() : nullptr;
  float* dq = query.requires_grad() ? query.grad().data() : nullptr;
  Tensor dv_rows = Tensor::zeros({batch, width});  // (B, A) per-row parts of dv
  float* dv_part = dv_rows.data();
  parallel_for(batch, positions * width, [&](int64_t first, int64_t last) {
    for (int64_t b = first; b < last; ++b) {
      float* dvb = dv_part + b * width;
      float* dqb = dq ? dq + b * width : unused_dq.data() + b * width;
      for (int64_t s = 0; s < positions; ++s) {
        const int64_t row = (b * positions + s) * width;
        const float* tr = pt + row;
        float* dk_row = dk ? dk + row : unused_dk.data() + b * width;
        const float g = de[b * positions + s];
#pragma omp simd
        for (int64_t a = 0; a < width; ++a) {
          const float dh = g * pv[a] * (1.f - tr[a] * tr[a]);
          dk_row[a] += dh;
          dqb[a] += dh;
          dvb[a] += g * tr[a];
        }
      }
    }
  });
  if (!v.requires_grad()) return;
  float* dv = v.grad().data();
  for (int64_t b = 0; b < batch; ++b)
#pragma omp simd
    for (int64_t a = 0; a < width; ++a) dv[a] += dv_part[b * width + a];
}

}  // namespace

Tensor additive_scores(Tape& tape, const Tensor& keys, const Tensor& query, const Tensor& v) {
  ATTN_CHECK(keys.rank() == 3 && query.rank() == 2 && query.dim(0) == keys.dim(0) && query.dim(1) == keys.dim(2) &&
                 v.numel() == keys.dim(2),
             "additive_scores: keys ", to_string(keys.shape()), " (B, S, A), query ", to_string(query.shape()),
             " (B, A) and v ", to_string(v.shape()), " (A) do not fit");
  int64_t batch = keys.dim(0), positions = keys.dim(1), width = keys.dim(2);
  Tensor scores = Tensor::empty({batch, positions});  // (B, S)
  {
    const Tensor t = tanh_of_sum(keys, query);
    const float* pt = t.data();
    const float* pv = v.data();
    float* e = scores.data();
    parallel_for(batch * positions, width, [&](int64_t first, int64_t last) {
      for (int64_t row = first; row < last; ++row) {
        float sum = 0.f;
#pragma omp simd reduction(+ : sum)
        for (int64_t a = 0; a < width; ++a) sum += pv[a] * pt[row * width + a];
        e[row] = sum;
      }
    });
  }  // t goes back to the pool here: the step keeps nothing of size S x A

  if (tape.needs_grad(keys, query, v)) {
    scores.set_requires_grad(true);
    tape.record([keys, query, v, scores = scores.grad_only()] { additive_scores_backward(keys, query, v, scores); });
  }
  return scores;
}

}  // namespace attn::ops
