#pragma once
// The loss of one teacher-forced batch, the one place training and validation compute it:
// label-smoothed cross-entropy of batch.tgt_out (padding ignored) under the model.
//   fused    forward_hidden, then ops::linear_cross_entropy over the output projection: the
//            (B, T, V) logits never exist (what attn-train runs)
//   unfused  forward's logits (B, T, V), then ops::cross_entropy over them, which writes their
//            gradient in place: the path before the fused loss, kept for attn-bench's comparison
//            (attn-bench train --unfused-loss) and as the reference of the fused one's tests
#include "data/batch.h"
#include "layers/run_context.h"
#include "models/seq2seq_model.h"
#include "ops/cross_entropy.h"

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

}  // namespace attn::models
