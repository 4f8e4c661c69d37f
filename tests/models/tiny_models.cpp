#include "tiny_models.h"

#include "ops/cross_entropy.h"

namespace attn::testing {

models::TransformerOptions tiny_transformer_options() {
  models::TransformerOptions options;
  options.source_vocab = options.target_vocab = 11;
  options.layer.width = 8;
  options.layer.heads = 2;
  options.layer.ffn_width = 16;
  options.layer.dropout = 0.f;
  options.encoder_layers = 1;
  options.decoder_layers = 1;
  options.max_positions = 64;
  return options;
}

std::unique_ptr<models::TransformerModel> tiny_transformer(uint64_t seed) {
  return std::make_unique<models::TransformerModel>(tiny_transformer_options(), seed);
}

std::vector<data::Example> make_examples(
    const std::vector<std::pair<std::vector<int32_t>, std::vector<int32_t>>>& pairs) {
  std::vector<data::Example> examples;
  for (size_t i = 0; i < pairs.size(); ++i) {
    data::Example example{pairs[i].first, pairs[i].second, int64_t(i)};
    example.src.push_back(data::kEosId);
    example.tgt.push_back(data::kEosId);
    examples.push_back(example);
  }
  return examples;
}

data::Batch batch_of(const std::vector<data::Example>& examples, int pad_multiple) {
  std::vector<const data::Example*> pointers;
  for (const auto& example : examples) pointers.push_back(&example);
  return data::make_batch(pointers, pad_multiple);
}

double batch_loss(const models::Seq2SeqModel& model, const data::Batch& batch, float label_smoothing) {
  Tape tape;
  NoGradScope no_grad(tape);
  Tensor logits = model.forward(layers::RunContext{tape}, batch);
  return ops::cross_entropy(tape, logits, batch.tgt_out, {label_smoothing, data::kPadId}).loss.item();
}

}  // namespace attn::testing
