// RNN-only tests, for every recurrent cell where the cell matters. The invariants every family
// keeps (padding, causality, step = teacher forcing, beam 1 = greedy, attention rows,
// checkpoints) are in test_model_invariants.cpp.
#include <catch2/catch.hpp>

#include "data/vocab.h"
#include "decode/attention_dump.h"
#include "decode/search.h"
#include "models/model_factory.h"
#include "ops/cross_entropy.h"
#include "optim/adam.h"
#include "tiny_models.h"

using namespace attn;
using attn::testing::batch_of;
using attn::testing::make_examples;
using attn::testing::model_gradient_mismatches;
using attn::testing::tiny_rnn;

namespace {

// Encoder states (B, S, 2H), flat.
std::vector<float> states_of(const models::RnnAttentionModel& model, const data::Batch& batch) {
  Tape tape;
  NoGradScope no_grad(tape);
  return model.encode(layers::RunContext{tape}, batch).to_vector();
}

// Checks the real positions of sentence `row` agree in two encodings of widths 2H.
void check_same_real_states(const std::vector<float>& a, int64_t row_a, int64_t length_a, const std::vector<float>& b,
                            int64_t row_b, int64_t length_b, int64_t real, int64_t width) {
  for (int64_t s = 0; s < real; ++s)
    for (int64_t k = 0; k < width; ++k)
      CHECK(a[(row_a * length_a + s) * width + k] == Approx(b[(row_b * length_b + s) * width + k]).margin(1e-6));
}

}  // namespace

TEST_CASE("the rnn encoder ignores padding: real positions are equal at S = 8 and S = 16", "[models][rnn]") {
  std::string cell = GENERATE(from_range(testing::recurrent_cell_names()));
  INFO(cell);
  auto model = tiny_rnn(3, cell);
  auto examples = make_examples(testing::kTinyPairs);
  data::Batch short_batch = batch_of(examples, 8), long_batch = batch_of(examples, 16);
  REQUIRE(short_batch.src_len == 8);
  REQUIRE(long_batch.src_len == 16);
  std::vector<float> a = states_of(*model, short_batch), b = states_of(*model, long_batch);
  for (int64_t row = 0; row < 4; ++row) check_same_real_states(a, row, 8, b, row, 16, short_batch.src_lengths[row], 8);
  // A sentence alone, with no padding at all: the backward direction starts at its last token.
  data::Batch alone = batch_of({examples[2]}, 1);
  check_same_real_states(states_of(*model, alone), 0, alone.src_len, b, 2, 16, alone.src_lengths[0], 8);
}

TEST_CASE("rnn gradients match finite differences through the whole model (BPTT)", "[models][rnn][grad][slow]") {
  std::string cell = GENERATE(from_range(testing::recurrent_cell_names()));
  INFO(cell);
  models::RnnAttentionOptions options = attn::testing::tiny_rnn_options(cell);
  SECTION("shared tied embeddings") {}
  SECTION("separate untied embeddings") {
    options.shared_embeddings = false;
    options.tied_embeddings = false;
  }
  models::RnnAttentionModel model(options, 3);
  // Different source lengths (a masked backward step) and target lengths (3 decoder steps).
  auto examples = make_examples({{{4, 5}, {6, 7}}, {{8}, {9}}});
  std::vector<std::string> mismatches = model_gradient_mismatches(model, batch_of(examples, 1));
  for (size_t i = 0; i < mismatches.size() && i < 20; ++i) UNSCOPED_INFO(mismatches[i]);
  CHECK(mismatches.empty());
}

TEST_CASE("rnn attention maps: one (B - 1 - T - S) cross map at layer 0", "[models][rnn]") {
  auto model = tiny_rnn();
  data::Batch batch = batch_of(make_examples(testing::kTinyPairs), 8);
  layers::AttentionMaps maps = decode::teacher_forced_attention(*model, batch);
  REQUIRE(maps.maps.size() == 1);
  CHECK(maps.maps[0].kind == layers::AttentionKind::cross);
  CHECK(maps.maps[0].layer == 0);
  CHECK(maps.maps[0].weights.shape() == Shape{4, 1, batch.tgt_len, batch.src_len});
}

TEST_CASE("a tiny rnn overfits 8 pairs and greedy decoding reproduces every target", "[models][rnn][train]") {
  std::string cell = GENERATE(from_range(testing::recurrent_cell_names()));
  INFO(cell);
  // Targets are the reversed sources with each id shifted: the model has to use attention.
  std::vector<std::pair<std::vector<int32_t>, std::vector<int32_t>>> pairs;
  const std::vector<std::vector<int32_t>> sources = {{4, 5, 6},        {7, 8}, {9, 10, 4, 5}, {6, 6, 7},
                                                     {10, 9, 8, 7, 6}, {5, 4}, {8, 10},       {4, 9, 7}};
  for (const auto& source : sources) {
    std::vector<int32_t> target(source.rbegin(), source.rend());
    for (int32_t& id : target) id = 4 + (id - 4 + 1) % 7;
    pairs.push_back({source, target});
  }
  models::RnnAttentionOptions options = attn::testing::tiny_rnn_options(cell);
  options.embedding_dim = 16;
  options.encoder_hidden = 16;
  options.decoder_hidden = 32;
  options.attention_dim = 16;
  models::RnnAttentionModel model(options, 7);
  data::Batch batch = batch_of(make_examples(pairs));
  optim::AdamOptions adam_options;
  adam_options.beta2 = 0.99f;
  optim::Adam adam(model.parameters(), adam_options);
  ops::CrossEntropyOptions loss_options;
  loss_options.pad_id = data::kPadId;
  double loss = 0.0;
  for (int step = 0; step < 300; ++step) {
    Tape tape;
    Tensor logits = model.forward(layers::RunContext{tape}, batch);
    ops::CrossEntropyResult ce = ops::cross_entropy(tape, logits, batch.tgt_out, loss_options);
    loss = ce.loss.item() / double(ce.tokens);
    tape.backward(ce.loss, 1.f / float(ce.tokens));
    adam.step(1e-2f);
    model.parameters().zero_grad();
  }
  CHECK(loss < 0.02);
  decode::SearchOptions search;
  search.beam = 1;
  auto hypotheses = decode::greedy_search(model, batch, search);
  for (size_t i = 0; i < pairs.size(); ++i) {
    std::vector<int32_t> expected = pairs[i].second;
    expected.push_back(data::kEosId);
    CHECK(hypotheses[i].tokens == expected);
  }
}

TEST_CASE("the model factory builds the rnn from a config - with the documented parameter names", "[models][rnn]") {
  io::Config config;
  config.model.type = ModelType::rnn;
  config.model.rnn.embedding_dim = 8;
  config.model.rnn.encoder_hidden = 4;
  config.model.rnn.decoder_hidden = 8;
  config.model.rnn.attention_dim = 8;
  SECTION("shared tied embeddings, gru: the names of every checkpoint so far") {
    auto model = models::make_model(config, {11, 11});
    CHECK(model->family() == "rnn");
    CHECK(model->target_vocab_size() == 11);
    const ParameterStore& store = model->parameters();
    for (const char* name : {"embedding.weight", "encoder.forward_gru.input.weight", "encoder.backward_gru.hidden.bias",
                             "decoder.init.weight", "decoder.attention.query.weight", "decoder.attention.key.weight",
                             "decoder.attention.v.weight", "decoder.gru.input.weight", "decoder.gru.hidden.weight",
                             "decoder.pre_output.weight"})
      CHECK(store.contains(name));
    CHECK_FALSE(store.contains("decoder.output.weight"));
    CHECK(store.get("decoder.gru.input.weight").shape() == Shape{3 * 8, 8 + 2 * 4});
  }
  SECTION("separate untied embeddings") {
    config.model.shared_embeddings = false;
    config.model.tied_embeddings = false;
    auto model = models::make_model(config, {11, 13});
    CHECK(model->target_vocab_size() == 13);
    const ParameterStore& store = model->parameters();
    for (const char* name : {"encoder.embedding.weight", "decoder.embedding.weight", "decoder.output.weight"})
      CHECK(store.contains(name));
    CHECK(store.get("decoder.output.weight").shape() == Shape{13, 8});
  }
  SECTION("an lstm cell: its parameters are named after it, with four gate blocks") {
    config.model.rnn.cell = CellType::lstm;
    auto model = models::make_model(config, {11, 11});
    const ParameterStore& store = model->parameters();
    for (const char* name :
         {"encoder.forward_lstm.input.weight", "encoder.forward_lstm.hidden.bias", "encoder.backward_lstm.input.bias",
          "encoder.backward_lstm.hidden.weight", "decoder.lstm.input.weight", "decoder.lstm.hidden.weight"})
      CHECK(store.contains(name));
    CHECK_FALSE(store.contains("decoder.gru.input.weight"));
    CHECK(store.get("encoder.forward_lstm.hidden.weight").shape() == Shape{4 * 4, 4});
    CHECK(store.get("decoder.lstm.input.weight").shape() == Shape{4 * 8, 8 + 2 * 4});
  }
}
