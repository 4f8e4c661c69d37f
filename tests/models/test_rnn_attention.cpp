#include <cmath>

#include <catch2/catch.hpp>

#include "data/vocab.h"
#include "decode/attention_dump.h"
#include "decode/search.h"
#include "io/checkpoint.h"
#include "models/model_factory.h"
#include "ops/cross_entropy.h"
#include "optim/adam.h"
#include "temp_dir.h"
#include "tiny_models.h"

using namespace attn;
using attn::testing::batch_loss;
using attn::testing::batch_of;
using attn::testing::logits_of;
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

decode::SearchOptions search_options(int beam) {
  decode::SearchOptions options;
  options.beam = beam;
  options.bos_id = data::kBosId;
  options.eos_id = data::kEosId;
  return options;
}

}  // namespace

TEST_CASE("the rnn encoder ignores padding: real positions are equal at S = 8 and S = 16", "[models][rnn]") {
  auto model = tiny_rnn();
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

TEST_CASE("extra padding does not change the rnn's loss", "[models][rnn]") {
  auto model = tiny_rnn();
  auto [tight, padded] = testing::tight_and_padded_loss(*model);
  CHECK(padded == Approx(tight).epsilon(1e-5));
}

TEST_CASE("rnn gradients match finite differences through the whole model (BPTT)", "[models][rnn][grad]") {
  models::RnnAttentionOptions options = attn::testing::tiny_rnn_options();
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

TEST_CASE("rnn attention maps: one (B - 1 - T - S) cross map whose real rows sum to 1 - padding 0", "[models][rnn]") {
  auto model = tiny_rnn();
  data::Batch batch = batch_of(make_examples(testing::kTinyPairs), 8);
  layers::AttentionMaps maps = decode::teacher_forced_attention(*model, batch);
  REQUIRE(maps.maps.size() == 1);
  CHECK(maps.maps[0].kind == layers::AttentionKind::cross);
  CHECK(maps.maps[0].layer == 0);
  REQUIRE(maps.maps[0].weights.shape() == Shape{4, 1, batch.tgt_len, batch.src_len});
  std::vector<float> weights = maps.maps[0].weights.to_vector();
  for (int64_t b = 0; b < batch.size; ++b)
    for (int64_t t = 0; t < batch.tgt_lengths[b]; ++t) {
      const float* row = weights.data() + (b * batch.tgt_len + t) * batch.src_len;
      double sum = 0.0;
      for (int64_t s = 0; s < batch.src_len; ++s) {
        sum += row[s];
        if (s >= batch.src_lengths[b]) CHECK(row[s] == 0.f);
      }
      CHECK(sum == Approx(1.0).margin(1e-5));
    }
}

TEST_CASE("rnn step-by-step decoding reproduces the teacher-forced logits and attention", "[models][rnn][decode]") {
  auto model = tiny_rnn();
  data::Batch batch = batch_of(make_examples({{{4, 5, 6}, {7, 8, 9}}, {{10, 9}, {4, 5, 6}}}));
  Tape tape;
  NoGradScope no_grad(tape);
  layers::AttentionMaps full_maps, step_maps;
  layers::RunContext full_ctx{tape};
  full_ctx.attention_maps = &full_maps;
  std::vector<float> full = model->forward(full_ctx, batch).to_vector();    // (B, T, V)
  std::vector<float> full_rows = full_maps.maps.at(0).weights.to_vector();  // (B, 1, T, S)
  layers::RunContext ctx{tape};
  ctx.attention_maps = &step_maps;
  auto state = model->start(ctx, batch);
  int64_t vocab = 11, length = batch.tgt_len, source = batch.src_len;
  for (int64_t t = 0; t < 4; ++t) {  // tgt_in = bos y1 y2 y3
    std::vector<int32_t> previous;
    for (int64_t b = 0; b < batch.size; ++b) previous.push_back(batch.tgt_in[b * length + t]);
    std::vector<float> step = model->step(ctx, *state, previous).to_vector();  // (B, V)
    REQUIRE(step_maps.maps.size() == size_t(t + 1));
    REQUIRE(step_maps.maps.back().weights.shape() == Shape{batch.size, 1, 1, source});
    std::vector<float> rows = step_maps.maps.back().weights.to_vector();
    for (int64_t b = 0; b < batch.size; ++b) {
      for (int64_t v = 0; v < vocab; ++v)
        CHECK(step[b * vocab + v] == Approx(full[(b * length + t) * vocab + v]).margin(1e-5));
      for (int64_t s = 0; s < source; ++s)
        CHECK(rows[b * source + s] == Approx(full_rows[(b * length + t) * source + s]).margin(1e-6));
    }
  }
}

TEST_CASE("rnn beam search with beam 1 equals greedy search", "[models][rnn][decode]") {
  auto model = tiny_rnn(5);
  data::Batch batch = batch_of(make_examples(testing::kTinyPairs));
  auto beam = decode::beam_search(*model, batch, search_options(1));
  auto greedy = decode::greedy_search(*model, batch, search_options(1));
  REQUIRE(beam.size() == greedy.size());
  for (size_t i = 0; i < beam.size(); ++i) {
    CHECK(beam[i].at(0).tokens == greedy[i].tokens);
    CHECK(beam[i].at(0).log_prob == Approx(greedy[i].log_prob).margin(1e-4));
  }
}

TEST_CASE("rnn save then load into a fresh model gives identical logits", "[models][rnn][io]") {
  attn::testing::TempDir dir;
  std::string path = dir.file("rnn.safetensors");
  auto saved = tiny_rnn(3);
  auto loaded = tiny_rnn(99);
  data::Batch batch = batch_of(make_examples(testing::kTinyPairs));
  std::vector<float> expected = logits_of(*saved, batch);
  REQUIRE(logits_of(*loaded, batch) != expected);
  io::save_checkpoint(path, saved->parameters());
  io::load_parameters(io::load_checkpoint(path), loaded->parameters());
  CHECK(logits_of(*loaded, batch) == expected);
}

TEST_CASE("a tiny rnn overfits 8 pairs and greedy decoding reproduces every target", "[models][rnn][train]") {
  // Targets are the reversed sources with each id shifted: the model has to use attention.
  std::vector<std::pair<std::vector<int32_t>, std::vector<int32_t>>> pairs;
  const std::vector<std::vector<int32_t>> sources = {{4, 5, 6},        {7, 8}, {9, 10, 4, 5}, {6, 6, 7},
                                                     {10, 9, 8, 7, 6}, {5, 4}, {8, 10},       {4, 9, 7}};
  for (const auto& source : sources) {
    std::vector<int32_t> target(source.rbegin(), source.rend());
    for (int32_t& id : target) id = 4 + (id - 4 + 1) % 7;
    pairs.push_back({source, target});
  }
  models::RnnAttentionOptions options = attn::testing::tiny_rnn_options();
  options.embedding_dim = 16;
  options.encoder_hidden = 16;
  options.decoder_hidden = 32;
  options.attention_dim = 16;
  models::RnnAttentionModel model(options, 7);
  data::Batch batch = batch_of(make_examples(pairs));
  optim::AdamOptions adam_options;
  adam_options.beta2 = 0.99f;
  optim::Adam adam(model.parameters(), adam_options);
  double loss = 0.0;
  for (int step = 0; step < 300; ++step) {
    Tape tape;
    Tensor logits = model.forward(layers::RunContext{tape}, batch);
    ops::CrossEntropyResult ce = ops::cross_entropy(tape, logits, batch.tgt_out, {0.f, data::kPadId});
    loss = ce.loss.item() / double(ce.tokens);
    tape.backward(ce.loss, 1.f / float(ce.tokens));
    adam.step(1e-2f);
    model.parameters().zero_grad();
  }
  CHECK(loss < 0.02);
  auto hypotheses = decode::greedy_search(model, batch, search_options(1));
  for (size_t i = 0; i < pairs.size(); ++i) {
    std::vector<int32_t> expected = pairs[i].second;
    expected.push_back(data::kEosId);
    CHECK(hypotheses[i].tokens == expected);
  }
}

TEST_CASE("the model factory builds the rnn from a config - with the documented parameter names", "[models][rnn]") {
  io::Config config;
  config.model.type = "rnn";
  config.model.rnn.embedding_dim = 8;
  config.model.rnn.encoder_hidden = 4;
  config.model.rnn.decoder_hidden = 8;
  config.model.rnn.attention_dim = 8;
  SECTION("shared tied embeddings") {
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
  SECTION("an lstm cell is refused with a clear message") {
    config.model.rnn.cell = "lstm";
    CHECK_THROWS_WITH(models::make_model(config, {11, 11}),
                      Catch::Contains("model.rnn.cell") && Catch::Contains("not implemented"));
  }
}
