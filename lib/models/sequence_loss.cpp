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

GuidedLossOptions guided_loss_options(const io::Config& config) {
  const io::GuidedAlignmentConfig& guided = config.train.guided_alignment;
  GuidedLossOptions options;
  options.weight = guided.weight;
  const int layers = config.model.transformer.decoder_layers;
  options.layer = guided.layer < 0 ? layers + guided.layer : guided.layer;
  options.shift = guided.shift;
  options.loss.cost = guided.cost;
  options.loss.head = guided.head.index;
  return options;
}

Tensor guided_alignment_targets(const data::Batch& batch, int shift) {
  Tensor targets = Tensor::zeros({batch.size, batch.tgt_len, batch.src_len});  // (B, T, S)
  float* a = targets.data();
  for (int64_t b = 0; b < batch.size && b < int64_t(batch.links.size()); ++b) {
    const data::PieceLinks& links = batch.links[size_t(b)];
    for (size_t first = 0; first < links.size();) {  // ordered by target: one run per row
      size_t end = first;
      while (end < links.size() && links[end].second == links[first].second) ++end;
      const int32_t position = links[first].second, t = position + shift;  // t: the decoder row pulled
      ATTN_CHECK(t < batch.tgt_lengths[size_t(b)], "guided alignment: target position ", position, " (shift ", shift,
                 ") of row ", b, " beyond its ", batch.tgt_lengths[size_t(b)], " tokens");
      float* row = a + (b * batch.tgt_len + t) * batch.src_len;
      const float share = 1.f / float(end - first);
      for (size_t i = first; i < end; ++i) {
        ATTN_CHECK(links[i].first < batch.src_lengths[size_t(b)], "guided alignment: source position ", links[i].first,
                   " of row ", b, " beyond its ", batch.src_lengths[size_t(b)], " tokens");
        row[links[i].first] = share;
      }
      first = end;
    }
  }
  return targets;
}

ops::GuidedAlignmentResult guided_loss(Tape& tape, const Tensor& weights, const data::Batch& batch,
                                       const GuidedLossOptions& options) {
  ATTN_CHECK(weights.defined(), "guided alignment: the model left no cross-attention weights of decoder layer ",
             options.layer, " (guided alignment needs a Transformer)");
  return ops::guided_alignment_loss(tape, weights, guided_alignment_targets(batch, options.shift), options.loss);
}

}  // namespace attn::models
