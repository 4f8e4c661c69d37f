#pragma once
// Fused log-softmax + label-smoothed cross-entropy over the vocabulary.
//
// Shapes: logits (..., V) folded to (N, V); targets N ids. One pass computes each row's max and
// logsumexp; backward rebuilds softmax from the kept logsumexp (N), so the probabilities
// (N, V) are never stored. With overwrite_logits, the backward writes the gradient over the
// logits themselves, so that the largest activation of a translation model (N x V floats)
// has no second buffer of its size for its gradient.
#include <cstdint>
#include <vector>

#include "autograd/tape.h"
#include "core/tensor.h"

namespace attn::ops {

struct CrossEntropyOptions {
  float label_smoothing = 0.f;  // eps in [0, 1): q = (1 - eps) onehot(y) + eps / V
  int32_t pad_id = 0;           // rows whose target is pad_id contribute nothing
  // The backward turns the logits into their gradient in place (Tensor::reuse_data_as_grad),
  // unless they already have a gradient: for callers (training) that read the logits no
  // more once the loss is computed, and whose other ops' backward does not read them either.
  bool overwrite_logits = false;
};

struct CrossEntropyResult {
  Tensor loss;     // one element: sum over non-pad rows of the smoothed loss (differentiable)
  double nll_sum;  // sum of -log p(target) over non-pad rows (no smoothing; for perplexity)
  int64_t tokens;  // number of non-pad targets
};

// Row loss = -sum_j q_j log p_j with p = softmax(logits row). Summed, not averaged: the caller
// divides by tokens (or scales the backward seed) as its normalisation demands.
CrossEntropyResult cross_entropy(Tape& tape, const Tensor& logits, const std::vector<int32_t>& targets,
                                 const CrossEntropyOptions& options = {});

}  // namespace attn::ops
