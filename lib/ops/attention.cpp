#include "ops/attention.h"

#include <algorithm>
#include <cmath>

#include "core/fast_math.h"
#include "core/parallel.h"
#include "ops/gemm.h"
#include "ops/masks.h"

namespace attn::ops {

namespace {

struct Dims {
  int64_t batch, heads, queries, keys, head_width;          // B, H, Tq, Tk, Dh
  int64_t rows() const { return batch * heads * queries; }  // rows of the (B*H*Tq, Tk) weights
};

// The checks of dims and mask that attention() and attention_step() share.
void check_dims_and_mask(const Dims& dims, const AttentionMask& mask, const Tensor& q, const Tensor& k) {
  ATTN_CHECK(dims.batch * dims.heads * dims.queries * dims.keys * dims.head_width > 0, "attention: empty input q ",
             to_string(q.shape()), ", k ", to_string(k.shape()));
  ATTN_CHECK(!mask.causal || dims.queries <= dims.keys, "attention: causal needs Tq <= Tk, got q ",
             to_string(q.shape()), ", k ", to_string(k.shape()));
  ATTN_CHECK(!mask.bias || dims.queries <= dims.keys, "attention: a bias needs Tq <= Tk, got q ", to_string(q.shape()),
             ", k ", to_string(k.shape()));
  ATTN_CHECK(!mask.bias || static_cast<int64_t>(mask.bias.slopes.size()) == dims.heads,
             "attention: ", mask.bias.slopes.size(), " bias slopes for H=", dims.heads, " heads");
  ATTN_CHECK(mask.key_lengths.empty() || static_cast<int64_t>(mask.key_lengths.size()) == dims.batch,
             "attention: ", mask.key_lengths.size(), " key lengths for a batch of B=", dims.batch);
  for (int32_t length : mask.key_lengths) {
    ATTN_CHECK(length >= 0 && length <= dims.keys, "attention: key length ", length, " outside [0, Tk=", dims.keys,
               "]");
  }
}

Dims check_inputs(const Tensor& q, const Tensor& k, const Tensor& v, const AttentionOptions& options) {
  ATTN_CHECK(q.rank() == 4 && k.rank() == 4, "attention: q and k must be (B, H, T, Dh), got q ", to_string(q.shape()),
             ", k ", to_string(k.shape()));
  ATTN_CHECK(q.dim(0) == k.dim(0) && q.dim(1) == k.dim(1) && q.dim(3) == k.dim(3), "attention: q ",
             to_string(q.shape()), " does not fit k ", to_string(k.shape()));
  ATTN_CHECK(v.shape() == k.shape(), "attention: v ", to_string(v.shape()), " differs from k ", to_string(k.shape()));
  Dims dims{q.dim(0), q.dim(1), q.dim(2), k.dim(2), q.dim(3)};
  check_dims_and_mask(dims, options.mask, q, k);
  ATTN_CHECK(options.dropout >= 0.f && options.dropout < 1.f, "attention: dropout ", options.dropout,
             " outside [0, 1)");
  ATTN_CHECK(!(options.training && options.dropout > 0.f) || options.rng, "attention: dropout needs an rng");
  return dims;
}

// Both masks hide a suffix of the keys, so row (b, i) sees exactly keys j < visible_keys.
int64_t visible_keys(const Dims& dims, const AttentionMask& mask, int64_t b, int64_t i) {
  int64_t limit = mask.key_lengths.empty() ? dims.keys : mask.key_lengths[b];
  if (mask.causal) limit = std::min(limit, i + (dims.keys - dims.queries) + 1);
  return limit;
}

// One row of scores (its `keys` already scaled) becomes P in place: S + A over the `visible`
// keys, + M past them, then softmax. The row's query is at `position`, of head `head`.
void softmax_row(float* row, int64_t keys, int64_t visible, const AttentionBias& bias, int64_t head, float position) {
  if (bias) {  // A = -slope |i - j|
    const float slope = bias.slopes[size_t(head)];
#pragma omp simd
    for (int64_t j = 0; j < visible; ++j) row[j] -= slope * std::fabs(position - float(j));
  }
  for (int64_t j = visible; j < keys; ++j) row[j] += kMaskValue;
  float max = *std::max_element(row, row + keys);
  float sum = 0.f;
#pragma omp simd reduction(+ : sum)
  for (int64_t j = 0; j < keys; ++j) {
    row[j] = fast_exp(row[j] - max);  // exactly 0 at masked keys: exp(-1e9) underflows
    sum += row[j];
  }
  float inverse = 1.f / sum;
#pragma omp simd
  for (int64_t j = 0; j < keys; ++j) row[j] *= inverse;
}

// scores (B, H, Tq, Tk), already scaled, become P in place: S + A + M, then softmax over each row.
void masked_softmax(Tensor& scores, const Dims& dims, const AttentionMask& mask) {
  float* values = scores.data();
  parallel_for(dims.rows(), dims.keys, [&](int64_t first, int64_t last) {
    for (int64_t r = first; r < last; ++r) {
      const int64_t query = r % dims.queries;
      softmax_row(values + r * dims.keys, dims.keys, visible_keys(dims, mask, r / (dims.heads * dims.queries), query),
                  mask.bias, (r / dims.queries) % dims.heads, float(query + (dims.keys - dims.queries)));
    }
  });
}

// Inverted dropout: Pd = P * keep / (1 - rate), keep[i] = (uniform(seed, first + i) >= rate).
Tensor dropout_weights(const Tensor& weights, float rate, Rng& rng) {
  Tensor dropped = Tensor::empty(weights.shape());  // (B, H, Tq, Tk)
  int64_t count = weights.numel();
  uint64_t seed = rng.seed(), first = rng.skip(count);
  float scale = 1.f / (1.f - rate);
  const float* p = weights.data();
  float* pd = dropped.data();
  parallel_for(count, 1, [&](int64_t begin, int64_t end) {
#pragma omp simd
    for (int64_t i = begin; i < end; ++i) pd[i] = uniform_at(seed, first + i) >= rate ? p[i] * scale : 0.f;
  });
  return dropped;
}

// In place, per row: dS = Pd * G - P * rowsum(Pd * G), G = dL/dPd (on entry in `grad`).
// This is softmax's backward dS = P * (dP - rowsum(dP * P)) with dP = G * keep / (1 - rate),
// rewritten with P * dP = Pd * G so that the dropout mask is never needed again.
// With a gradient W = dL/dP on the weights themselves (AttentionOptions::weights_grad; null:
// none), dP gains W, so P * dP = Pd * G + P * W and dS = Pd * G + P * W - P * rowsum(that);
// `grad` then holds G, or zeros when the output got no gradient.
void softmax_backward_rows(const Tensor& weights, const Tensor& dropped, const Tensor* weights_grad, Tensor& grad,
                           int64_t keys) {
  const float* p = weights.data();
  const float* pd = dropped.data();
  const float* w = weights_grad ? weights_grad->data() : nullptr;
  float* g = grad.data();
  int64_t rows = grad.numel() / keys;
  parallel_for(rows, keys, [&](int64_t first, int64_t last) {
    for (int64_t r = first; r < last; ++r) {
      float* gr = g + r * keys;
      const float* pr = p + r * keys;
      const float* pdr = pd + r * keys;
      float dot = 0.f;
      if (w) {
        const float* wr = w + r * keys;
#pragma omp simd reduction(+ : dot)
        for (int64_t j = 0; j < keys; ++j) {
          gr[j] = pdr[j] * gr[j] + pr[j] * wr[j];
          dot += gr[j];
        }
#pragma omp simd
        for (int64_t j = 0; j < keys; ++j) gr[j] -= pr[j] * dot;
      } else {
#pragma omp simd reduction(+ : dot)
        for (int64_t j = 0; j < keys; ++j) dot += pdr[j] * gr[j];
#pragma omp simd
        for (int64_t j = 0; j < keys; ++j) gr[j] = pdr[j] * gr[j] - pr[j] * dot;
      }
    }
  });
}

// What the backward reads. q, k, v and dropped as the products multiplied them (f32, or their
// bf16 copies in bf16 precision: each converted once for the forward and the backward);
// the *_grad handles carry only the gradient slots of the inputs.
struct SavedAttention {
  Tensor q, k, v;                 // (B, H, T, Dh) matmul operands
  Tensor q_grad, k_grad, v_grad;  // the inputs' gradient slots
  Tensor weights;                 // (B, H, Tq, Tk) P, f32
  Tensor dropped;                 // Pd, f32 (weights itself without dropout)
  Tensor dropped_operand;         // Pd as the P V product multiplied it
  float scale;
  Precision precision;
};

// Backward of S = c Q K^T + A + M (A and M are constants), P = softmax(S), Pd = dropout(P), O = Pd V with c =
// 1/sqrt(Dh):
//   dV += Pd^T dO                      (Tk,Tq) x (Tq,Dh)
//   G   = dO V^T                       (Tq,Dh) x (Dh,Tk)   d/dPd
//   dS  = Pd * G - P * rowsum(Pd * G)  (= P * (dP - rowsum(dP * P)) without dropout;
//                                       with a gradient on P itself, see above)
//   dQ += c dS K                       (Tq,Tk) x (Tk,Dh)
//   dK += c dS^T Q                     (Tk,Tq) x (Tq,Dh)
// (per batch row and head; the gemms run batched over (B, H)). dO and dS are each read by two
// products, so they are converted once too.
void attention_backward(const SavedAttention& saved, const Tensor& output) {
  // The weights' own gradient, when a loss read them (weights_grad); P is never hidden, so
  // has_grad() says whether that loss ran its backward.
  const bool weights_have_grad = saved.weights.requires_grad() && saved.weights.has_grad();
  if (!output.has_grad() && !weights_have_grad) return;
  const bool output_has_grad = output.has_grad();
  Tensor d_output_operand = output_has_grad ? matmul_operand(output.grad(), saved.precision) : Tensor();
  if (output_has_grad && saved.v_grad.requires_grad()) {
    GradientTarget dv = gradient_target(saved.v_grad);
    gemm(MatrixView::of(saved.dropped_operand).transposed(), MatrixView::of(d_output_operand), dv.view, dv.options);
  }
  if (!saved.q_grad.requires_grad() && !saved.k_grad.requires_grad()) return;
  Tensor d_scores = Tensor::empty(saved.weights.shape());  // (B, H, Tq, Tk)
  if (output_has_grad) {
    gemm(MatrixView::of(d_output_operand), MatrixView::of(saved.v).transposed(), MatrixView::of(d_scores));
  } else {
    std::fill(d_scores.data(), d_scores.data() + d_scores.numel(), 0.f);
  }
  const Tensor weights_grad = weights_have_grad ? saved.weights.grad() : Tensor();
  softmax_backward_rows(saved.weights, saved.dropped, weights_have_grad ? &weights_grad : nullptr, d_scores,
                        saved.weights.dim(-1));
  Tensor d_scores_operand = matmul_operand(d_scores, saved.precision);  // a MatrixView does not own its data
  MatrixView d_s = MatrixView::of(d_scores_operand);
  if (saved.q_grad.requires_grad()) {
    GradientTarget dq = gradient_target(saved.q_grad, saved.scale);
    gemm(d_s, MatrixView::of(saved.k), dq.view, dq.options);
  }
  if (saved.k_grad.requires_grad()) {
    GradientTarget dk = gradient_target(saved.k_grad, saved.scale);
    gemm(d_s.transposed(), MatrixView::of(saved.q), dk.view, dk.options);
  }
}

}  // namespace

AttentionResult attention(Tape& tape, const Tensor& q, const Tensor& k, const Tensor& v,
                          const AttentionOptions& options) {
  Dims dims = check_inputs(q, k, v, options);
  float scale = 1.f / std::sqrt(static_cast<float>(dims.head_width));
  Tensor q_operand = matmul_operand(q, options.precision), k_operand = matmul_operand(k, options.precision),
         v_operand = matmul_operand(v, options.precision);

  // Scale first (gemm's alpha), then mask, then softmax; K^T is a stride swap, not a copy.
  Tensor weights = Tensor::empty({dims.batch, dims.heads, dims.queries, dims.keys});  // (B, H, Tq, Tk)
  gemm(MatrixView::of(q_operand), MatrixView::of(k_operand).transposed(), MatrixView::of(weights),
       GemmOptions::overwrite(scale));
  masked_softmax(weights, dims, options.mask);

  bool drop = options.training && options.dropout > 0.f;
  Tensor dropped = drop ? dropout_weights(weights, options.dropout, *options.rng) : weights;  // (B, H, Tq, Tk)
  Tensor dropped_operand = matmul_operand(dropped, options.precision);
  Tensor output = Tensor::empty({dims.batch, dims.heads, dims.queries, dims.head_width});  // (B, H, Tq, Dh)
  gemm(MatrixView::of(dropped_operand), MatrixView::of(v_operand), MatrixView::of(output));

  if (tape.needs_grad(q, k, v)) {
    output.set_requires_grad(true);
    if (options.weights_grad) weights.set_requires_grad(true);
    // An input whose bf16 copy is kept needs only its gradient slot.
    auto slot = [](const Tensor& input, const Tensor& operand) {
      return operand.same_storage(input) ? input : input.grad_only();
    };
    SavedAttention saved{q_operand,          k_operand, v_operand, slot(q, q_operand), slot(k, k_operand),
                         slot(v, v_operand), weights,   dropped,   dropped_operand,    scale,
                         options.precision};
    tape.record([saved, output = output.grad_only()] { attention_backward(saved, output); });
  }
  return {output, weights};
}

namespace {

inline float as_float(float x) { return x; }
inline float as_float(uint16_t x) { return bf16_to_f32(x); }

// Where one (b, h) query row finds its key and value j, in the storages form: rows of `width`
// one after another.
template <class T>
struct StoredRow {
  const T *keys, *values;
  int64_t width;
  const T* key(int64_t j) const { return keys + j * width; }
  const T* value(int64_t j) const { return values + j * width; }
};

// The storages form (ops::KeyValues): (B, H, capacity, Dh) storages; query row b reads stored
// row stored_row[b].
template <class T>
struct Storages {
  const T *keys, *values;
  int64_t capacity, heads, width;
  const std::vector<int64_t>& stored_row;
  StoredRow<T> row(int64_t b, int64_t h) const {
    const int64_t at = (stored_row[b] * heads + h) * capacity * width;
    return {keys + at, values + at, width};
  }
};

// The steps form, f32: keys[j] and values[j] (R_j, H, 1, Dh); query row b reads row
// rows[j * query_rows + b] of step j.
struct Steps {
  const std::vector<const float*>& keys;
  const std::vector<const float*>& values;
  const int32_t* rows;
  int64_t query_rows, heads, width;
  struct Row {
    const Steps& steps;
    int64_t b, h;
    int64_t at(int64_t j) const {
      return (int64_t(steps.rows[j * steps.query_rows + b]) * steps.heads + h) * steps.width;
    }
    const float* key(int64_t j) const { return steps.keys[size_t(j)] + at(j); }
    const float* value(int64_t j) const { return steps.values[size_t(j)] + at(j); }
  };
  Row row(int64_t b, int64_t h) const { return {*this, b, h}; }
};

// scores[j] = scale q . key j for the `count` keys of one (b, h) row.
template <class T, class Row>
void score_keys(const T* q, const Row& row, int64_t count, int64_t width, float scale, float* scores) {
  for (int64_t j = 0; j < count; ++j) {
    const T* key = row.key(j);
    float dot = 0.f;
#pragma omp simd reduction(+ : dot)
    for (int64_t d = 0; d < width; ++d) dot += as_float(q[d]) * as_float(key[d]);
    scores[j] = dot * scale;
  }
}

// output = sum_j weights[j] value j over the `count` values of one (b, h) row.
template <class Row>
void weigh_values(const float* weights, const Row& row, int64_t count, int64_t width, float* output) {
  std::fill(output, output + width, 0.f);
  for (int64_t j = 0; j < count; ++j) {
    const auto* value = row.value(j);
    const float weight = weights[j];
#pragma omp simd
    for (int64_t d = 0; d < width; ++d) output[d] += weight * as_float(value[d]);
  }
}

// Every (b, h) query row over its keys and values in `source` (Storages or Steps).
template <class T, class Source>
void attend_rows(const T* q, const Source& source, const Dims& dims, const AttentionMask& mask, float* weights,
                 float* output) {
  const float scale = 1.f / std::sqrt(static_cast<float>(dims.head_width));
  const float position = float(dims.keys - 1);  // the query's, in the offset form
  const int64_t width = dims.head_width;
  parallel_for(dims.rows(), dims.keys * width, [&](int64_t first, int64_t last) {
    for (int64_t r = first; r < last; ++r) {  // r = (b, h)
      const int64_t b = r / dims.heads, h = r % dims.heads;
      const auto row = source.row(b, h);
      float* row_weights = weights + r * dims.keys;
      score_keys(q + r * width, row, dims.keys, width, scale, row_weights);
      softmax_row(row_weights, dims.keys, visible_keys(dims, mask, b, 0), mask.bias, h, position);
      weigh_values(row_weights, row, dims.keys, width, output + r * width);
    }
  });
}

// The storages form's checks; the stored row each query row reads.
std::vector<int64_t> checked_storage_rows(const Tensor& q, const KeyValues& kv) {
  const Tensor& k = kv.keys;
  ATTN_CHECK(k.rank() == 4, "attention_step: k must be (B, H, capacity, Dh), got ", to_string(k.shape()));
  const int64_t query_rows = kv.rows ? int64_t(kv.rows->size()) : k.dim(0);
  ATTN_CHECK(q.dim(0) == query_rows && q.dim(1) == k.dim(1) && q.dim(3) == k.dim(3), "attention_step: q ",
             to_string(q.shape()), " does not fit k ", to_string(k.shape()),
             kv.rows ? " read through a row map of " + std::to_string(query_rows) + " rows" : std::string());
  std::vector<int64_t> stored_row(static_cast<size_t>(q.dim(0)));
  for (int64_t b = 0; b < q.dim(0); ++b) {
    stored_row[b] = kv.rows ? (*kv.rows)[b] : b;
    ATTN_CHECK(stored_row[b] >= 0 && stored_row[b] < k.dim(0), "attention_step: row map entry ", stored_row[b],
               " outside k ", to_string(k.shape()));
  }
  ATTN_CHECK(kv.values.shape() == k.shape() && kv.values.dtype() == k.dtype() && q.dtype() == k.dtype(),
             "attention_step: q ", to_string(q.shape()), " ", dtype_name(q.dtype()), ", k ", to_string(k.shape()), " ",
             dtype_name(k.dtype()), " and v ", to_string(kv.values.shape()), " ", dtype_name(kv.values.dtype()),
             " differ");
  ATTN_CHECK(kv.length >= 1 && kv.length <= k.dim(2), "attention_step: ", kv.length, " keys in a capacity of ",
             k.dim(2));
  return stored_row;
}

// The steps form's checks; each step's keys and values as pointers.
std::pair<std::vector<const float*>, std::vector<const float*>> checked_steps(const Tensor& q, const KeyValues& kv) {
  const int64_t rows = q.dim(0), length = kv.length;
  ATTN_CHECK(q.dtype() == DType::f32, "attention_step: q must be f32 over cached steps, got ", dtype_name(q.dtype()));
  ATTN_CHECK(length >= 1 && kv.step_values && kv.step_rows && int64_t(kv.step_keys->size()) == length &&
                 int64_t(kv.step_values->size()) == length && int64_t(kv.step_rows->size()) == length * rows,
             "attention_step: ", length, " steps for q ", to_string(q.shape()), " but ", kv.step_keys->size(),
             " keys, ", kv.step_values ? kv.step_values->size() : 0, " values and ",
             kv.step_rows ? kv.step_rows->size() : 0, " row numbers");
  std::vector<const float*> keys, values;
  for (int64_t j = 0; j < length; ++j) {
    const Tensor &k = (*kv.step_keys)[size_t(j)], &v = (*kv.step_values)[size_t(j)];
    ATTN_CHECK(k.rank() == 4 && k.dim(2) == 1 && k.dim(1) == q.dim(1) && k.dim(3) == q.dim(3) &&
                   v.shape() == k.shape() && k.dtype() == DType::f32 && v.dtype() == DType::f32,
               "attention_step: step ", j, "'s keys ", to_string(k.shape()), " and values ", to_string(v.shape()),
               " do not fit q ", to_string(q.shape()));
    for (int64_t b = 0; b < rows; ++b) {
      const int32_t row = (*kv.step_rows)[size_t(j * rows + b)];
      ATTN_CHECK(row >= 0 && row < k.dim(0), "attention_step: row ", row, " of step ", j, " outside its ",
                 to_string(k.shape()));
    }
    keys.push_back(k.data());
    values.push_back(v.data());
  }
  return {std::move(keys), std::move(values)};
}

}  // namespace

AttentionResult attention_step(const Tensor& q, const KeyValues& kv, const AttentionMask& mask) {
  ATTN_CHECK(q.rank() == 4 && q.dim(2) == 1, "attention_step: q must be (B, H, 1, Dh), got ", to_string(q.shape()));
  ATTN_CHECK(!q.requires_grad(), "attention_step: decoding only, q needs no gradient");
  const Dims dims{q.dim(0), q.dim(1), 1, kv.length, q.dim(3)};
  AttentionResult result;  // output (B, H, 1, Dh), weights (B, H, 1, Tk)
  auto attend = [&](const auto* queries, const auto& source) {
    result.weights = Tensor::empty({dims.batch, dims.heads, 1, dims.keys});
    result.output = Tensor::empty({dims.batch, dims.heads, 1, dims.head_width});
    attend_rows(queries, source, dims, mask, result.weights.data(), result.output.data());
  };
  if (kv.in_steps()) {
    const auto [keys, values] = checked_steps(q, kv);
    check_dims_and_mask(dims, mask, q, kv.step_keys->front());
    attend(q.data(), Steps{keys, values, kv.step_rows->data(), dims.batch, dims.heads, dims.head_width});
    return result;
  }
  const std::vector<int64_t> stored_row = checked_storage_rows(q, kv);
  check_dims_and_mask(dims, mask, q, kv.keys);
  const int64_t capacity = kv.keys.dim(2);
  if (q.dtype() == DType::bf16) {
    attend(q.data_bf16(), Storages<uint16_t>{kv.keys.data_bf16(), kv.values.data_bf16(), capacity, dims.heads,
                                             dims.head_width, stored_row});
  } else {
    attend(q.data(),
           Storages<float>{kv.keys.data(), kv.values.data(), capacity, dims.heads, dims.head_width, stored_row});
  }
  return result;
}

}  // namespace attn::ops
