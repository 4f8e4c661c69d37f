#pragma once
// Fused output projection + label-smoothed cross-entropy: the loss of ops::cross_entropy over
// the logits x W^T + b, without the (N, V) logits ever existing.
//
// Shapes: x (..., D) folded to (N, D); weight (V, D); bias (V) or undefined; targets N ids.
// The vocabulary is processed in chunks of columns: the forward computes one chunk of logits
// (N, C) at a time and keeps per row a running max and sum of exponentials, the target's logit
// and the sum of the logits (for the smoothing term), so only the logsumexp (N) outlives it.
// The backward recomputes each chunk's logits, turns them in place into
// dloss (softmax - smoothed target), and adds that chunk's share to dx (dL W_chunk), dW_chunk
// (dL^T x) and db. For a 4,096-token batch over 8,000 words, the 130 MB of logits and their
// gradient become one chunk of at most kChunkElements floats (16 MiB).
//
// The products follow the form of the weight its store prepared (core/matmul_weight.h), as
// ops::linear does: f32 multiplies the parameter; bf16 (bf16 training) multiplies x's bf16 copy
// (made once) with the bf16 weight, converts each chunk's gradient once for both backward
// products, and lands dW in the f32 parameter's gradient; int8 is for decoding and refused.
//
// The values are those of ops::cross_entropy(ops::linear(x, W, b)) up to the order of the
// summations over the vocabulary (chunk by chunk here): tests/ops/test_linear_cross_entropy.cpp
// bounds the difference.
#include <cstdint>
#include <vector>

#include "autograd/tape.h"
#include "core/matmul_weight.h"
#include "core/tensor.h"
#include "ops/cross_entropy.h"

namespace attn::ops {

struct LinearCrossEntropyOptions {
  float label_smoothing = 0.f;  // eps in [0, 1): q = (1 - eps) onehot(y) + eps / V
  int32_t pad_id = 0;           // rows whose target is pad_id contribute nothing
  // Vocabulary columns per chunk; 0 picks the widest multiple of 64 whose chunk of logits (N, C)
  // fits kChunkElements (at least 64 columns). Tests set it to force several chunks.
  int64_t chunk_columns = 0;
};

// The bound on one chunk of logits, in floats (16 MiB): large enough that each chunk's products
// are efficient matmuls, small enough to be a fraction of the (N, V) logits it replaces.
constexpr int64_t kChunkElements = int64_t(1) << 22;

// The same result as ops::cross_entropy(tape, x W^T + b, targets): loss (differentiable with
// respect to x, weight.f32 and bias), nll_sum and tokens over the non-pad rows.
CrossEntropyResult linear_cross_entropy(Tape& tape, const Tensor& x, const MatmulWeight& weight, const Tensor& bias,
                                        const std::vector<int32_t>& targets,
                                        const LinearCrossEntropyOptions& options = {});

// With an f32 weight (V, D) as it is.
CrossEntropyResult linear_cross_entropy(Tape& tape, const Tensor& x, const Tensor& weight, const Tensor& bias,
                                        const std::vector<int32_t>& targets,
                                        const LinearCrossEntropyOptions& options = {});

}  // namespace attn::ops
