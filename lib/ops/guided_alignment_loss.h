#pragma once
// guided_alignment_loss: how far a cross-attention's weights are from reference alignments
// (guided alignment training, Garg et al. 2019; Marian's --guided-alignment).
//
// Shapes: weights (B, H, Tq, Tk) from ops::attention with weights_grad; targets (B, Tq, Tk),
// row i of sentence b the reference distribution of query i over the keys: the source pieces
// linked to the target piece that query i predicts, each 1 / (their count), or a row of zeros
// when that piece has no link (padding rows and eos included). P is one head's weights, or
// their mean over the heads. Over the linked rows (row sum > 0) only:
//   ce   -sum_j A_ij log(P_ij + eps)
//   mse   sum_j (P_ij - A_ij)^2
// Padded keys have P = A = 0 and add nothing. Summed, not averaged: the caller divides by
// `rows` (the linked rows), as cross_entropy leaves the division by tokens to its caller.
#include <cstdint>
#include <optional>

#include "autograd/tape.h"
#include "core/choice.h"
#include "core/tensor.h"

namespace attn::ops {

struct GuidedAlignmentOptions {
  GuidedAlignmentCost cost = GuidedAlignmentCost::ce;
  std::optional<int> head;  // one head; unset: the mean over the heads
  float epsilon = 1e-6f;    // in ce's log, as Marian's
};

struct GuidedAlignmentResult {
  Tensor loss;       // one element: the sum over linked rows (differentiable in the weights)
  int64_t rows = 0;  // linked rows
};

GuidedAlignmentResult guided_alignment_loss(Tape& tape, const Tensor& weights, const Tensor& targets,
                                            const GuidedAlignmentOptions& options = {});

}  // namespace attn::ops
