#include "tiny_models.h"

#include <cmath>

#include "layers/positions.h"
#include "layers/recurrent_cell.h"
#include "models/model_factory.h"
#include "models/sequence_loss.h"
#include "ops/cross_entropy.h"
#include "optim/adam.h"

namespace attn::testing {

namespace {

ops::CrossEntropyOptions loss_options(float label_smoothing) {
  ops::CrossEntropyOptions options;
  options.label_smoothing = label_smoothing;
  options.pad_id = data::kPadId;
  return options;
}

}  // namespace

const TokenPairs kTinyPairs = {{{4, 5, 6}, {7, 8}}, {{9, 10}, {4, 5, 6, 7}}, {{5}, {6}}, {{8, 7, 6, 5, 4}, {10, 9}}};

std::vector<std::string> recurrent_cell_names() {
  std::vector<std::string> names;
  for (const auto& cell : layers::recurrent_cell_kinds()) names.push_back(choice_name(cell.type));
  return names;
}

std::vector<TinyModelKind> tiny_model_kinds() {
  std::vector<TinyModelKind> kinds;
  for (const auto& scheme : layers::position_schemes())
    kinds.push_back({"transformer " + std::string(choice_name(scheme.positions)), ModelType::transformer, CellType::gru,
                     scheme.positions});
  for (const auto& cell : layers::recurrent_cell_kinds())
    kinds.push_back({"rnn " + std::string(choice_name(cell.type)), ModelType::rnn, cell.type});
  return kinds;
}

io::Config tiny_model_config(const TinyModelKind& kind, uint64_t seed) {
  io::Config config;
  config.train.seed = int64_t(seed);
  config.model.type = kind.type;
  io::TransformerConfig& transformer = config.model.transformer;
  transformer.d_model = 8;
  transformer.heads = 2;
  transformer.ffn_dim = 16;
  transformer.encoder_layers = transformer.decoder_layers = 1;
  transformer.dropout = 0.0;
  transformer.max_positions = 64;
  transformer.positions = kind.positions;
  io::RnnConfig& rnn = config.model.rnn;
  rnn.cell = kind.cell;
  rnn.embedding_dim = 8;
  rnn.encoder_hidden = 4;
  rnn.decoder_hidden = 8;
  rnn.attention_dim = 8;
  rnn.dropout = 0.0;
  return config;
}

std::unique_ptr<models::Seq2SeqModel> tiny_model(const TinyModelKind& kind, uint64_t seed) {
  return models::make_model(tiny_model_config(kind, seed), {kTinyVocab, kTinyVocab});
}

models::TransformerOptions tiny_transformer_options(Positions positions) {
  return models::transformer_options(
      tiny_model_config({"transformer", ModelType::transformer, CellType::gru, positions}), {kTinyVocab, kTinyVocab});
}

std::unique_ptr<models::TransformerModel> tiny_transformer(uint64_t seed) {
  return std::make_unique<models::TransformerModel>(tiny_transformer_options(), seed);
}

models::RnnAttentionOptions tiny_rnn_options(const std::string& cell) {
  return models::rnn_attention_options(
      tiny_model_config({"rnn " + cell, ModelType::rnn, *parse_choice<CellType>(cell)}), {kTinyVocab, kTinyVocab});
}

std::unique_ptr<models::RnnAttentionModel> tiny_rnn(uint64_t seed, const std::string& cell) {
  return std::make_unique<models::RnnAttentionModel>(tiny_rnn_options(cell), seed);
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
  return ops::cross_entropy(tape, logits, batch.tgt_out, loss_options(label_smoothing)).loss.item();
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
    ops::CrossEntropyResult ce = models::sequence_loss(model, layers::RunContext{tape}, batch, {});  // as training
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
    tape.backward(models::sequence_loss(model, layers::RunContext{tape}, batch, {label_smoothing}).loss);
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

}  // namespace attn::testing
