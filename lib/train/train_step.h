#pragma once
// TrainStep: one optimizer step, the one home of the update rule that attn-train runs and
// attn-bench times:
//   accumulate: for each batch, forward to the hidden states -> the output projection fused with
//               the label-smoothed cross-entropy (models::sequence_loss) -> backward seeded with
//               1 / (target tokens of the whole step), so gradients sum to the per-token mean;
//               with train.guided_alignment, + weight x the guided loss of the guided layer's
//               cross attention per linked target position of the whole step (guided_loss)
//               in bf16 the matmul weights are converted (and packed) once, first
//               (refresh_matmul_weights)
//   (the caller may sum the gradients over ranks, or inspect them, here)
//   update:     global-norm clipping (train.clip_norm; 0 = off, the norm is measured either way)
//               -> a non-finite loss or norm skips the update -> Adam at the schedule's rate for
//               the step -> gradients zeroed.
// Adam's options and the schedule come from train.*; the schedule's width from the model
// family (models::schedule_width).
#include <cstdint>
#include <vector>

#include "core/matmul_weight.h"
#include "core/rng.h"
#include "data/batch.h"
#include "dist/communicator.h"
#include "io/config.h"
#include "models/seq2seq_model.h"
#include "models/sequence_loss.h"
#include "ops/precision.h"
#include "optim/adam.h"
#include "optim/schedule.h"

namespace attn::train {

// Sums over one optimizer step (all accumulated batches; all ranks once summed).
struct StepStats {
  double loss = 0;  // smoothed loss sum
  double nll = 0;   // unsmoothed -log p sum
  int64_t tokens = 0;
  double guided_loss = 0;   // guided alignment loss sum (unweighted), over guided_rows
  int64_t guided_rows = 0;  // linked target positions
  double grad_norm = 0;
  double allreduce_seconds = 0;  // summing the gradients over ranks
  bool finite = true;
};

// train.precision resolved on every rank of `world` (ops::resolve_precision); under auto the
// ranks agree on bf16 only when each measured it faster, so that all compute alike.
ops::PrecisionChoice training_precision(Precision requested, dist::Communicator& world);

class TrainStep {
 public:
  // `precision`: train.precision resolved (ops::resolve_precision), f32 or bf16. `loss_kernel`:
  // fused always, but for attn-bench's comparison with the unfused loss (--unfused-loss).
  TrainStep(models::Seq2SeqModel& model, const io::Config& config, const ops::PrecisionChoice& precision,
            models::LossKernel loss_kernel = models::LossKernel::fused);

  // Forward and backward of every batch (an empty one is skipped); gradients accumulate in the
  // model's parameters, each seeded with 1 / total_target_tokens (and the guided loss with
  // weight / total_linked_rows: data::linked_target_rows of the whole step).
  StepStats accumulate(const std::vector<data::Batch>& batches, int64_t total_target_tokens, Rng& dropout_rng,
                       int64_t total_linked_rows = 0);
  // Clips, checks, applies Adam for optimizer step `step` (from 1) and zeroes the gradients;
  // sets stats.grad_norm and stats.finite.
  void update(StepStats& stats, int64_t step);

  // bf16 training (train.precision): remakes the bf16 copies of the matmul weights from the f32
  // master weights, and packs them for the forward products (ops::pack_matmul_weights). accumulate() does it first;
  // call it too after changing the weights otherwise before a forward (validation of the moving average). f32: nothing
  // to do.
  void refresh_matmul_weights();

  Precision precision() const { return precision_.precision; }
  const ops::PrecisionChoice& precision_choice() const { return precision_; }

  optim::Adam& adam() { return adam_; }
  float learning_rate(int64_t step) const { return optim::learning_rate_at(schedule_, step); }

 private:
  models::Seq2SeqModel& model_;
  ops::PrecisionChoice precision_;  // f32 or bf16: of the products and of the weights' forms
  optim::Adam adam_;
  optim::ScheduleOptions schedule_;
  models::SequenceLossOptions loss_;
  models::GuidedLossOptions guided_;  // weight 0: off
  double clip_norm_;
};

}  // namespace attn::train
