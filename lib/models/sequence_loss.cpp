#include "models/sequence_loss.h"

#include "data/vocab.h"
#include "ops/linear_cross_entropy.h"

namespace attn::models {

ops::CrossEntropyResult sequence_loss(const Seq2SeqModel& model, const layers::RunContext& ctx,
                                      const data::Batch& batch, const SequenceLossOptions& options) {
  if (options.kernel == LossKernel::unfused) {
    ops::CrossEntropyOptions loss;
    loss.label_smoothing = options.label_smoothing;
    loss.pad_id = data::kPadId;
    loss.overwrite_logits = true;  // nothing reads the logits after the loss
    return ops::cross_entropy(ctx.tape, model.forward(ctx, batch), batch.tgt_out, loss);  // over (B, T, V)
  }
  HiddenStates out = model.forward_hidden(ctx, batch);  // (B, T, E)
  ops::LinearCrossEntropyOptions loss;
  loss.label_smoothing = options.label_smoothing;
  loss.pad_id = data::kPadId;
  return ops::linear_cross_entropy(ctx.tape, out.hidden, *out.projection.weight, out.projection.bias, batch.tgt_out,
                                   loss);
}

}  // namespace attn::models
