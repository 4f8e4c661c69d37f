// Fused output projection + label-smoothed cross-entropy over chunks of the vocabulary.
// Shapes: x (N, D); weight (V, D); bias (V); a chunk of logits (N, C); logsumexp (N); loss (1).
#include "ops/linear_cross_entropy.h"

#include <algorithm>
#include <cmath>

#include "core/fast_math.h"
#include "core/parallel.h"
#include "ops/gemm.h"
#include "ops/linear.h"

namespace attn::ops {

namespace {

constexpr int64_t kColumnMultiple = 64;

// What the products multiply: the values of x and W in the form the forward used (f32, or the
// bf16 copies), and the tensors whose gradients the backward writes.
struct Operands {
  Tensor x_values;       // (N, D), f32 or bf16
  Tensor x;              // (N, D): its gradient slot (in bf16 the f32 values are not kept)
  Tensor weight_values;  // (V, D), f32 or bf16
  Tensor weight;         // (V, D): the f32 parameter
  Tensor bias;           // (V) or undefined

  int64_t rows() const { return x_values.dim(0); }
  int64_t vocab() const { return weight_values.dim(0); }
};

// Columns [first, first + count) of the vocabulary.
struct Chunk {
  int64_t first = 0;
  int64_t count = 0;
};

int64_t chunk_width(int64_t rows, int64_t vocab, int64_t requested) {
  if (requested > 0) return std::min(requested, vocab);
  int64_t fitting = kChunkElements / std::max<int64_t>(rows, 1) / kColumnMultiple * kColumnMultiple;
  return std::min(vocab, std::max(kColumnMultiple, fitting));
}

std::vector<Chunk> chunks_of(int64_t vocab, int64_t width) {
  std::vector<Chunk> chunks;
  for (int64_t first = 0; first < vocab; first += width) chunks.push_back({first, std::min(width, vocab - first)});
  return chunks;
}

// logits (N, C) = x W[chunk]^T + b[chunk], into `scratch` (N, width >= C) read as a plain (N, C).
MatrixView chunk_logits(const Operands& in, const Chunk& chunk, Tensor& scratch, bool recomputed) {
  MatrixView logits{scratch.raw(), {in.rows(), chunk.count}, {chunk.count, 1}, DType::f32};
  GemmOptions options = GemmOptions::overwrite(1.f, in.bias.defined() ? in.bias.data() + chunk.first : nullptr);
  options.recomputed = recomputed;
  gemm(MatrixView::of(in.x_values), MatrixView::of(in.weight_values).row_range(chunk.first, chunk.count).transposed(),
       logits, options);
  return logits;
}

// Per row, what the forward carries from chunk to chunk.
struct RowState {
  float max = -INFINITY;  // the largest logit so far
  double exp_sum = 0.0;   // sum of exp(logit - max) so far
  double logit_sum = 0.0;
  float target_logit = 0.f;
};

// Folds one chunk of a row into its state. Within the chunk, the max and exp(z - max) as in
// ops::cross_entropy; across chunks the sum is rescaled to the new max (exact exp, in double).
void fold_chunk(const float* z, int64_t count, RowState& state) {
  float best = z[0], sum = 0.f;
#pragma omp simd reduction(max : best) reduction(+ : sum)
  for (int64_t j = 0; j < count; ++j) {
    best = z[j] > best ? z[j] : best;
    sum += z[j];
  }
  float exp_sum = 0.f;
#pragma omp simd reduction(+ : exp_sum)
  for (int64_t j = 0; j < count; ++j) exp_sum += fast_exp(z[j] - best);
  if (best > state.max) {
    state.exp_sum = state.exp_sum * std::exp(double(state.max) - double(best)) + exp_sum;
    state.max = best;
  } else {
    state.exp_sum += double(exp_sum) * std::exp(double(best) - double(state.max));
  }
  state.logit_sum += sum;
}

void fold_chunk_rows(const MatrixView& logits, const Chunk& chunk, const std::vector<int32_t>& targets, int32_t pad_id,
                     std::vector<RowState>& states) {
  const float* z = static_cast<const float*>(logits.data);
  int64_t rows = logits.rows(), count = chunk.count;
  parallel_for(rows, count, [&](int64_t first, int64_t last) {
    for (int64_t r = first; r < last; ++r) {
      if (targets[r] == pad_id) continue;
      const float* row = z + r * count;
      fold_chunk(row, count, states[r]);
      int64_t target = targets[r] - chunk.first;
      if (target >= 0 && target < count) states[r].target_logit = row[target];
    }
  });
}

struct Sums {
  double loss = 0.0;
  double nll = 0.0;
  int64_t tokens = 0;
};

// lse = max + log(sum exp(z - max)); nll = lse - z_y; smoothed row loss =
// (1 - eps) nll + eps (lse - mean_j z_j), the definition of ops::cross_entropy. Writes lse.
Sums finish_rows(const std::vector<RowState>& states, const std::vector<int32_t>& targets, int64_t vocab,
                 const LinearCrossEntropyOptions& options, float* lse) {
  double eps = options.label_smoothing, loss = 0.0, nll = 0.0;
  int64_t tokens = 0;
  for (size_t r = 0; r < states.size(); ++r) {
    if (targets[r] == options.pad_id) continue;
    const RowState& state = states[r];
    lse[r] = state.max + std::log(float(state.exp_sum));
    double row_nll = double(lse[r]) - state.target_logit;
    double row_uniform = double(lse[r]) - state.logit_sum / double(vocab);
    loss += (1.0 - eps) * row_nll + eps * row_uniform;
    nll += row_nll;
    ++tokens;
  }
  return {loss, nll, tokens};
}

// z := dloss (p - q) in place over one chunk, p = exp(z - lse), q = eps/V + (1 - eps)[j == y];
// pad rows become zero.
void softmax_minus_target(const MatrixView& logits, const Chunk& chunk, const std::vector<int32_t>& targets,
                          const float* lse, int64_t vocab, float dloss, const LinearCrossEntropyOptions& options) {
  float* z = static_cast<float*>(const_cast<void*>(logits.data));
  int64_t rows = logits.rows(), count = chunk.count;
  float eps = options.label_smoothing, uniform = eps / float(vocab);
  parallel_for(rows, count, [&](int64_t first, int64_t last) {
    for (int64_t r = first; r < last; ++r) {
      float* row = z + r * count;
      if (targets[r] == options.pad_id) {
        std::fill(row, row + count, 0.f);
        continue;
      }
      float row_lse = lse[r];
#pragma omp simd
      for (int64_t j = 0; j < count; ++j) row[j] = dloss * (fast_exp(row[j] - row_lse) - uniform);
      int64_t target = targets[r] - chunk.first;
      if (target >= 0 && target < count) row[target] -= dloss * (1.f - eps);
    }
  });
}

struct Saved {
  Operands in;
  std::vector<int32_t> targets;
  Tensor lse;  // (N)
  LinearCrossEntropyOptions options;
  int64_t width = 0;  // columns per chunk
};

// Per chunk: logits again, dL = dloss (softmax - q) in place, then
//   dx        += dL W[chunk]     (N, C) x (C, D)
//   dW[chunk]  = dL^T x          (C, N) x (N, D)   (its rows are written by this chunk alone)
//   db[chunk] += sum_rows dL
// In bf16, dL is converted once for both products.
void backward(const Saved& saved, const Tensor& loss) {
  if (!loss.has_grad() || saved.in.rows() == 0) return;
  const Operands& in = saved.in;
  float dloss = loss.grad().item();
  bool want_x = in.x.requires_grad(), want_weight = in.weight.requires_grad();
  bool want_bias = in.bias.defined() && in.bias.requires_grad();
  GradientTarget dx, dw;
  if (want_x) dx = gradient_target(in.x);
  if (want_weight) dw = gradient_target(in.weight);
  bool bf16 = in.x_values.dtype() == DType::bf16;
  Tensor scratch = Tensor::empty({in.rows() * saved.width});
  for (const Chunk& chunk : chunks_of(in.vocab(), saved.width)) {
    MatrixView logits = chunk_logits(in, chunk, scratch, true);
    softmax_minus_target(logits, chunk, saved.targets, saved.lse.data(), in.vocab(), dloss, saved.options);
    MatrixView gradient = logits;
    Tensor gradient_bf16;
    if (bf16) {
      gradient_bf16 = bf16_copy(logits);
      gradient = MatrixView::of(gradient_bf16);
    }
    if (want_x) {
      gemm(gradient, MatrixView::of(in.weight_values).row_range(chunk.first, chunk.count), dx.view, dx.options);
      dx.options = GemmOptions::accumulating();  // the first chunk wrote it (or added to it)
    }
    if (want_weight)
      gemm(gradient.transposed(), MatrixView::of(in.x_values), dw.view.row_range(chunk.first, chunk.count), dw.options);
    if (want_bias)
      add_column_sums(static_cast<const float*>(logits.data), logits.rows(), chunk.count,
                      in.bias.grad().data() + chunk.first);
  }
}

void check_inputs(const Tensor& x, const Tensor& weight, const Tensor& bias, const std::vector<int32_t>& targets,
                  const LinearCrossEntropyOptions& options) {
  ATTN_CHECK(weight.rank() == 2 && weight.dim(0) > 0 && x.rank() >= 1 && x.dim(-1) == weight.dim(1),
             "linear_cross_entropy: input ", to_string(x.shape()), " does not fit weight ", to_string(weight.shape()));
  ATTN_CHECK(!bias.defined() || bias.shape() == Shape{weight.dim(0)}, "linear_cross_entropy: bias ",
             bias.defined() ? to_string(bias.shape()) : "", " does not fit weight ", to_string(weight.shape()));
  ATTN_CHECK(options.label_smoothing >= 0.f && options.label_smoothing < 1.f, "linear_cross_entropy: label_smoothing ",
             options.label_smoothing, " is outside [0, 1)");
  int64_t rows = x.numel() / x.dim(-1), vocab = weight.dim(0);
  ATTN_CHECK(static_cast<int64_t>(targets.size()) == rows, "linear_cross_entropy: ", targets.size(), " targets for ",
             rows, " rows of input ", to_string(x.shape()));
  for (int64_t r = 0; r < rows; ++r) {
    int32_t id = targets[r];
    ATTN_CHECK(id == options.pad_id || (id >= 0 && id < vocab), "linear_cross_entropy: target id ", id, " at row ", r,
               " is outside the vocabulary [0, ", vocab, ")");
  }
}

CrossEntropyResult linear_cross_entropy_with(Tape& tape, const Tensor& x_in, const Tensor& weight_values,
                                             const Tensor& weight, const Tensor& bias,
                                             const std::vector<int32_t>& targets,
                                             const LinearCrossEntropyOptions& options) {
  check_inputs(x_in, weight_values, bias, targets, options);
  Tensor x = x_in.view({x_in.numel() / x_in.dim(-1), x_in.dim(-1)});  // (N, D)
  bool bf16 = weight_values.dtype() == DType::bf16 && x.dtype() == DType::f32;
  Operands in{bf16 ? bf16_copy(MatrixView::of(x)) : x, x, weight_values, weight, bias};
  int64_t width = chunk_width(in.rows(), in.vocab(), options.chunk_columns);

  std::vector<RowState> states(in.rows());
  if (in.rows() > 0) {
    Tensor scratch = Tensor::empty({in.rows() * width});  // freed here: the backward takes its own
    for (const Chunk& chunk : chunks_of(in.vocab(), width))
      fold_chunk_rows(chunk_logits(in, chunk, scratch, false), chunk, targets, options.pad_id, states);
  }

  Tensor lse = Tensor::empty({in.rows()});  // (N), unused on pad rows
  Sums sums = finish_rows(states, targets, in.vocab(), options, lse.data());
  Tensor loss = Tensor::full({1}, float(sums.loss));  // (1)
  if (tape.needs_grad(x, weight, bias)) {
    loss.set_requires_grad(true);
    if (bf16) in.x = x.grad_only();
    Saved saved{in, targets, lse, options, width};
    tape.record([saved, loss = loss.grad_only()] { backward(saved, loss); });
  }
  return CrossEntropyResult{loss, sums.nll, sums.tokens};
}

}  // namespace

CrossEntropyResult linear_cross_entropy(Tape& tape, const Tensor& x, const MatmulWeight& weight, const Tensor& bias,
                                        const std::vector<int32_t>& targets, const LinearCrossEntropyOptions& options) {
  ATTN_CHECK(weight.precision == Precision::f32 || weight.precision == Precision::bf16,
             "linear_cross_entropy: int8 weights are for decoding; the loss multiplies in f32 or bf16");
  return linear_cross_entropy_with(tape, x, weight.prepared(), weight.f32, bias, targets, options);
}

CrossEntropyResult linear_cross_entropy(Tape& tape, const Tensor& x, const Tensor& weight, const Tensor& bias,
                                        const std::vector<int32_t>& targets, const LinearCrossEntropyOptions& options) {
  return linear_cross_entropy_with(tape, x, weight, weight, bias, targets, options);
}

}  // namespace attn::ops
