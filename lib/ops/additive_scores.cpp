// additive_scores. Shapes: keys (B, S, A); query (B, A); v (A); scores (B, S).
#include "ops/additive_scores.h"

#include "core/fast_math.h"
#include "core/parallel.h"

namespace attn::ops {

namespace {

// tanh(x) = 1 - 2 / (e^(2x) + 1): vectorises through fast_exp; saturates to +-1 without NaN
// (fast_exp clamps), absolute error about 1e-7.
inline float fast_tanh(float x) { return 1.f - 2.f / (fast_exp(2.f * x) + 1.f); }

// With t = tanh(k[b, s] + q[b]) recomputed:
//   dk[b, s, a] += de[b, s] v[a] (1 - t^2),  dq[b, a] += sum_s of the same,  dv[a] += sum_{b, s} de[b, s] t.
// Rows b run in parallel; dv is summed per row first, then added in row order (deterministic).
void additive_scores_backward(const Tensor& keys, const Tensor& query, const Tensor& v, const Tensor& scores) {
  if (!scores.has_grad()) return;
  int64_t batch = keys.dim(0), positions = keys.dim(1), width = keys.dim(2);
  const float* k = keys.data();
  const float* q = query.data();
  const float* pv = v.data();
  const float* de = scores.grad().data();
  float* dk = keys.requires_grad() ? keys.grad().data() : nullptr;
  float* dq = query.requires_grad() ? query.grad().data() : nullptr;
  Tensor dv_rows = Tensor::zeros({batch, width});  // (B, A) per-row parts of dv
  float* dv_part = dv_rows.data();
#pragma omp parallel for if (keys.numel() > kParallelWork) schedule(static)
  for (int64_t b = 0; b < batch; ++b) {
    const float* qb = q + b * width;
    float* dvb = dv_part + b * width;
    for (int64_t s = 0; s < positions; ++s) {
      const float* row = k + (b * positions + s) * width;
      float g = de[b * positions + s];
      float* dk_row = dk ? dk + (b * positions + s) * width : nullptr;
      float* dqb = dq ? dq + b * width : nullptr;
#pragma omp simd
      for (int64_t a = 0; a < width; ++a) {
        float t = fast_tanh(row[a] + qb[a]);
        float dh = g * pv[a] * (1.f - t * t);
        if (dk_row) dk_row[a] += dh;
        if (dqb) dqb[a] += dh;
        dvb[a] += g * t;
      }
    }
  }
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
  const float* k = keys.data();
  const float* q = query.data();
  const float* pv = v.data();
  float* e = scores.data();
#pragma omp parallel for collapse(2) if (keys.numel() > kParallelWork) schedule(static)
  for (int64_t b = 0; b < batch; ++b)
    for (int64_t s = 0; s < positions; ++s) {
      const float* row = k + (b * positions + s) * width;
      const float* qb = q + b * width;
      float sum = 0.f;
#pragma omp simd reduction(+ : sum)
      for (int64_t a = 0; a < width; ++a) sum += pv[a] * fast_tanh(row[a] + qb[a]);
      e[b * positions + s] = sum;
    }

  if (tape.needs_grad(keys, query, v)) {
    scores.set_requires_grad(true);
    tape.record([keys, query, v, scores] { additive_scores_backward(keys, query, v, scores); });
  }
  return scores;
}

}  // namespace attn::ops
