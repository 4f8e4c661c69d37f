#include "tiny_models.h"

#include <cmath>

#include "ops/cross_entropy.h"
#include "optim/adam.h"

namespace attn::testing {

const TokenPairs kTinyPairs = {{{4, 5, 6}, {7, 8}}, {{9, 10}, {4, 5, 6, 7}}, {{5}, {6}}, {{8, 7, 6, 5, 4}, {10, 9}}};

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

models::RnnAttentionOptions tiny_rnn_options() {
  models::RnnAttentionOptions options;
  options.source_vocab = options.target_vocab = 11;
  options.embedding_dim = 8;
  options.encoder_hidden = 4;
  options.decoder_hidden = 8;
  options.attention_dim = 8;
  options.dropout = 0.f;
  return options;
}

std::unique_ptr<models::RnnAttentionModel> tiny_rnn(uint64_t seed) {
  return std::make_unique<models::RnnAttentionModel>(tiny_rnn_options(), seed);
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

std::vector<float> logits_of(const models::Seq2SeqModel& model, const data::Batch& batch) {
  Tape tape;
  NoGradScope no_grad(tape);
  return model.forward(layers::RunContext{tape}, batch).to_vector();
}

double fit(models::Seq2SeqModel& model, const std::function<data::Batch(int)>& next_batch, int steps,
           float learning_rate) {
  optim::Adam adam(model.parameters(), {});
  double loss = 0;
  for (int step = 0; step < steps; ++step) {
    data::Batch batch = next_batch(step);
    Tape tape;
    Tensor logits = model.forward(layers::RunContext{tape}, batch);  // (B, T, V)
    ops::CrossEntropyResult ce = ops::cross_entropy(tape, logits, batch.tgt_out, {0.f, data::kPadId});
    loss = ce.loss.item() / double(ce.tokens);
    tape.backward(ce.loss, 1.f / float(ce.tokens));
    adam.step(learning_rate);
    model.parameters().zero_grad();
  }
  return loss;
}

namespace {

// "name[index]" of flat element `i` of the store's value buffer (alignment padding: "").
std::string element_name(const ParameterStore& store, int64_t i) {
  const float* element = store.values() + i;
  for (const auto& parameter : store.parameters()) {
    const float* first = parameter.tensor.data();
    if (first <= element && element < first + parameter.tensor.numel())
      return parameter.name + "[" + std::to_string(element - first) + "]";
  }
  return "";
}

}  // namespace

std::vector<std::string> model_gradient_mismatches(models::Seq2SeqModel& model, const data::Batch& batch,
                                                   float label_smoothing, float step) {
  ParameterStore& store = model.parameters();
  store.zero_grad();
  {
    Tape tape;
    Tensor logits = model.forward(layers::RunContext{tape}, batch);
    tape.backward(ops::cross_entropy(tape, logits, batch.tgt_out, {label_smoothing, data::kPadId}).loss);
  }
  std::vector<float> analytic(store.grads(), store.grads() + store.size());
  float* values = store.values();
  std::vector<std::string> mismatches;
  for (int64_t i = 0; i < int64_t(store.size()); ++i) {
    float original = values[i];
    values[i] = original + step;
    double plus = batch_loss(model, batch, label_smoothing);
    values[i] = original - step;
    double minus = batch_loss(model, batch, label_smoothing);
    values[i] = original;
    double numeric = (plus - minus) / (2 * step);
    if (std::fabs(numeric - analytic[i]) > 5e-3 + 5e-2 * std::fabs(numeric))
      mismatches.push_back(element_name(store, i) + ": analytic " + std::to_string(analytic[i]) + " numeric " +
                           std::to_string(numeric));
  }
  return mismatches;
}

std::pair<double, double> tight_and_padded_loss(const models::Seq2SeqModel& model) {
  auto examples = make_examples(kTinyPairs);
  return {batch_loss(model, batch_of(examples, 1), 0.1f), batch_loss(model, batch_of(examples, 16), 0.1f)};
}

}  // namespace attn::testing
