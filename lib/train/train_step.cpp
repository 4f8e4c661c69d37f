#include "train/train_step.h"

#include <cmath>

#include "core/buffer_pool.h"
#include "models/model_factory.h"
#include "ops/add.h"
#include "ops/gemm.h"
#include "ops/linear.h"
#include "optim/clip.h"

namespace attn::train {

namespace {

optim::AdamOptions adam_options(const io::TrainConfig& t) {
  optim::AdamOptions options;
  options.beta1 = float(t.adam_beta1);
  options.beta2 = float(t.adam_beta2);
  options.epsilon = float(t.adam_epsilon);
  options.weight_decay = float(t.weight_decay);
  options.decoupled_weight_decay = true;  // AdamW
  return options;
}

optim::ScheduleOptions schedule_options(const io::Config& config) {
  optim::ScheduleOptions options;
  options.type = config.train.schedule;
  options.learning_rate = float(config.train.learning_rate);
  options.warmup_steps = config.train.warmup_steps;
  options.d_model = models::schedule_width(config);
  return options;
}

}  // namespace

ops::PrecisionChoice training_precision(Precision requested, dist::Communicator& world) {
  ops::PrecisionChoice choice = ops::resolve_precision(requested, "train.precision");
  const bool bf16 = world.all(choice.precision == Precision::bf16);
  if (choice.precision == Precision::bf16 && !bf16) {
    choice.precision = Precision::f32;
    choice.reason += "; f32 after all, since another rank measured f32 faster";
  }
  return choice;
}

TrainStep::TrainStep(models::Seq2SeqModel& model, const io::Config& config, const ops::PrecisionChoice& precision,
                     models::LossKernel loss_kernel)
    : model_(model),
      precision_(precision),
      adam_(model.parameters(), adam_options(config.train)),
      schedule_(schedule_options(config)),
      loss_{float(config.train.label_smoothing), loss_kernel},
      guided_(models::guided_loss_options(config)),
      clip_norm_(config.train.clip_norm) {
  ATTN_CHECK(precision.precision == Precision::f32 || precision.precision == Precision::bf16,
             "training computes in f32 or bf16, not ", choice_name(precision.precision));
}

void TrainStep::refresh_matmul_weights() {
  if (precision() == Precision::f32) return;
  model_.parameters().prepare_matmul_weights(precision());
  // The forward products x W^T then read W in oneDNN's blocked layout instead of copying the
  // transposed W into it in every product, which saves more matmul time in a bf16 step than the
  // packing costs. In f32 the packing costs more than it saves (each step would repack 4-byte
  // weights), so f32 training multiplies the parameters (docs/performance.md, "Packed weights").
  // The output projection stays plain: the fused loss multiplies its plain form chunk by chunk
  // of the vocabulary, so packing it would reorder the largest weight every step for nothing.
  ops::pack_matmul_weights(model_.parameters(), model_.output_projection().weight);
}

StepStats TrainStep::accumulate(const std::vector<data::Batch>& batches, int64_t total_target_tokens, Rng& dropout_rng,
                                int64_t total_linked_rows) {
  refresh_matmul_weights();  // the last update, a resume or a validation changed the f32 weights
  StepStats stats;
  for (const data::Batch& batch : batches) {
    if (batch.size == 0) continue;  // a rank's share when there are fewer sentences than ranks
    Tape tape;
    layers::RunContext ctx{tape, true, &dropout_rng, nullptr, precision()};
    layers::GuidedCrossAttention guided{guided_.layer, {}};
    if (guided_.on() && total_linked_rows > 0) ctx.guided = &guided;
    ops::CrossEntropyResult ce = models::sequence_loss(model_, ctx, batch, loss_);
    stats.loss += ce.loss.item();
    stats.nll += ce.nll_sum;
    stats.tokens += ce.tokens;
    if (!ctx.guided) {
      tape.backward(ce.loss, 1.f / float(total_target_tokens));  // the step's loss is per target token
      continue;
    }
    ops::GuidedAlignmentResult aligned = models::guided_loss(tape, guided.weights, batch, guided_);
    stats.guided_loss += aligned.loss.item();
    stats.guided_rows += aligned.rows;
    // loss / T + weight x guided / R, seeded with 1 / T.
    const float guided_scale = float(guided_.weight * double(total_target_tokens) / double(total_linked_rows));
    tape.backward(ops::add(tape, ce.loss, aligned.loss, 1.f, guided_scale), 1.f / float(total_target_tokens));
  }
  return stats;
}

void TrainStep::update(StepStats& stats, int64_t step) {
  ParameterStore& parameters = model_.parameters();
  stats.grad_norm =
      clip_norm_ > 0 ? optim::clip_grad_norm(parameters, clip_norm_) : optim::global_grad_norm(parameters);
  stats.finite = std::isfinite(stats.loss) && std::isfinite(stats.grad_norm);
  if (stats.finite) adam_.step(learning_rate(step));
  parameters.zero_grad();
  BufferPool::instance().end_step();  // the pool's footprint follows this step's live high-water mark
}

}  // namespace attn::train
