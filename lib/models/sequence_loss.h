#pragma once
// The loss of one teacher-forced batch, the one place training and validation compute it:
// label-smoothed cross-entropy of batch.tgt_out (padding ignored) under the model.
//   fused    forward_hidden, then ops::linear_cross_entropy over the output projection: the
//            (B, T, V) logits never exist (what attn-train runs)
//   unfused  forward's logits (B, T, V), then ops::cross_entropy over them, which writes their
//            gradient in place: the path before the fused loss, kept for attn-bench's comparison
//            (attn-bench train --unfused-loss) and as the reference of the fused one's tests
#include "data/batch.h"
#include "io/config.h"
#include "layers/run_context.h"
#include "models/seq2seq_model.h"
#include "ops/cross_entropy.h"
#include "ops/guided_alignment_loss.h"

namespace attn::models {

enum class LossKernel { fused, unfused };

struct SequenceLossOptions {
  float label_smoothing = 0.f;
  LossKernel kernel = LossKernel::fused;
};

// Summed over the batch's non-pad targets, as ops::cross_entropy returns it: loss (smoothed,
// differentiable when ctx.tape records), nll_sum (unsmoothed) and tokens.
ops::CrossEntropyResult sequence_loss(const Seq2SeqModel& model, const layers::RunContext& ctx,
                                      const data::Batch& batch, const SequenceLossOptions& options);

// Guided alignment (train.guided_alignment): the loss between the guided layer's cross
// attention, left in layers::RunContext::guided by the forward, and the batch's links.
struct GuidedLossOptions {
  double weight = 0;  // 0: off
  int layer = 0;      // the decoder layer, from 0 (resolved from the config's negative form)
  int shift = 0;      // target piece t pulls row t + shift (io::GuidedAlignmentConfig::shift)
  ops::GuidedAlignmentOptions loss;
  bool on() const { return weight > 0; }
};

GuidedLossOptions guided_loss_options(const io::Config& config);

// The targets (B, T, S) of ops::guided_alignment_loss: row t + shift of sentence b spreads 1
// evenly over the source positions linked to target position t (Batch::links), zeros in the
// rows of no linked position. Links never name the target eos, so row t + 1 exists.
Tensor guided_alignment_targets(const data::Batch& batch, int shift);

// ops::guided_alignment_loss of `weights` (B, H, T, S) against the batch's targets.
ops::GuidedAlignmentResult guided_loss(Tape& tape, const Tensor& weights, const data::Batch& batch,
                                       const GuidedLossOptions& options);

}  // namespace attn::models
