// Invariants every model family (and the RNN with every recurrent cell) must keep, run on the
// tiny model of each kind (tiny_model_kinds()): padding and batch-mates change nothing, no
// position sees a later target token, step-by-step decoding reproduces teacher forcing, beam 1
// is greedy, attention rows are distributions, and a checkpoint round trip is exact.
// Family-specific tests stay in test_transformer*.cpp and test_rnn_attention.cpp.
#include <algorithm>
#include <cmath>
#include <map>

#include <catch2/catch.hpp>

#include "decode/attention_dump.h"
#include "decode/search.h"
#include "io/checkpoint.h"
#include "models/model_factory.h"
#include "models/sequence_loss.h"
#include "temp_dir.h"
#include "tiny_models.h"

using namespace attn;
using attn::testing::batch_of;
using attn::testing::kTinyVocab;
using attn::testing::logits_of;
using attn::testing::make_examples;
using attn::testing::tiny_model;
using attn::testing::TinyModelKind;

namespace {

decode::SearchOptions search_options(int beam) {
  decode::SearchOptions options;
  options.beam = beam;
  options.bos_id = data::kBosId;
  options.eos_id = data::kEosId;
  return options;
}

// The previous tokens of every row at decoder position t: column t of batch.tgt_in.
std::vector<int32_t> tokens_at(const data::Batch& batch, int64_t t) {
  std::vector<int32_t> tokens;
  for (int64_t b = 0; b < batch.size; ++b) tokens.push_back(batch.tgt_in[b * batch.tgt_len + t]);
  return tokens;
}

// Whether key k of query q is hidden from sentence b in a map of `kind`: padding keys, and
// for decoder self-attention the keys after the query (causal).
bool hidden_key(const layers::AttentionMap& map, const data::Batch& batch, int64_t b, int64_t q, int64_t k) {
  if (map.kind == layers::AttentionKind::decoder_self) return k > q;
  return k >= batch.src_lengths[b];
}

}  // namespace

TEST_CASE("a sentence's logits depend neither on padding nor on the other sentences of its batch",
          "[models][invariants]") {
  TinyModelKind kind = GENERATE(from_range(testing::tiny_model_kinds()));
  INFO(kind.label);
  auto model = tiny_model(kind);
  auto examples = make_examples(testing::kTinyPairs);
  data::Batch padded = batch_of(examples, 16);
  REQUIRE(padded.src_len == 16);
  std::vector<float> together = logits_of(*model, padded);  // (B, 16, V)
  for (int64_t b = 0; b < padded.size; ++b) {
    data::Batch alone = batch_of({examples[b]}, 1);  // no padding at all
    std::vector<float> single = logits_of(*model, alone);
    for (int64_t t = 0; t < padded.tgt_lengths[b]; ++t)
      for (int64_t v = 0; v < kTinyVocab; ++v)
        CHECK(single[t * kTinyVocab + v] == Approx(together[(b * padded.tgt_len + t) * kTinyVocab + v]).margin(1e-5));
  }
  // And so the loss, whose padded target positions count for nothing.
  CHECK(testing::batch_loss(*model, padded, 0.1f) ==
        Approx(testing::batch_loss(*model, batch_of(examples, 1), 0.1f)).epsilon(1e-5));
}

TEST_CASE("changing a future target token does not change earlier logits", "[models][invariants]") {
  TinyModelKind kind = GENERATE(from_range(testing::tiny_model_kinds()));
  INFO(kind.label);
  auto model = tiny_model(kind);
  data::Batch original = batch_of(make_examples({{{4, 5, 6}, {7, 8, 9, 10}}}));
  data::Batch changed = batch_of(make_examples({{{4, 5, 6}, {7, 8, 4, 10}}}));  // position 2 differs
  std::vector<float> a = logits_of(*model, original), b = logits_of(*model, changed);
  // tgt_in = bos 7 8 9 10: positions 0..2 see only bos 7 8, identical in both.
  for (int64_t i = 0; i < 3 * kTinyVocab; ++i) CHECK(a[i] == Approx(b[i]).margin(1e-5));
  bool later_differs = false;
  for (int64_t i = 3 * kTinyVocab; i < 4 * kTinyVocab; ++i) later_differs |= std::fabs(a[i] - b[i]) > 1e-4;
  CHECK(later_differs);
}

TEST_CASE("step-by-step decoding reproduces the teacher-forced logits and cross-attention",
          "[models][invariants][decode]") {
  TinyModelKind kind = GENERATE(from_range(testing::tiny_model_kinds()));
  INFO(kind.label);
  auto model = tiny_model(kind);
  data::Batch batch = batch_of(make_examples({{{4, 5, 6}, {7, 8, 9}}, {{10, 9}, {4, 5, 6}}}));
  Tape tape;
  NoGradScope no_grad(tape);
  layers::AttentionMaps full_maps, step_maps;
  layers::RunContext full_ctx{tape};
  full_ctx.attention_maps = &full_maps;
  std::vector<float> full = model->forward(full_ctx, batch).to_vector();  // (B, T, V)
  std::map<int, std::vector<float>> full_cross;                           // layer -> (B, H, T, S)
  for (const auto& map : full_maps.maps)
    if (map.kind == layers::AttentionKind::cross) full_cross[map.layer] = map.weights.to_vector();
  REQUIRE_FALSE(full_cross.empty());
  layers::RunContext ctx{tape};
  ctx.attention_maps = &step_maps;
  auto state = model->start(ctx, batch);
  const int64_t length = batch.tgt_len, source = batch.src_len;
  for (int64_t t = 0; t < 4; ++t) {  // tgt_in = bos y1 y2 y3
    size_t first_map = step_maps.maps.size();
    std::vector<float> step = model->step(ctx, *state, tokens_at(batch, t)).to_vector();  // (B, V)
    for (int64_t b = 0; b < batch.size; ++b)
      for (int64_t v = 0; v < kTinyVocab; ++v)
        CHECK(step[b * kTinyVocab + v] == Approx(full[(b * length + t) * kTinyVocab + v]).margin(1e-4));
    int cross_maps = 0;
    for (size_t m = first_map; m < step_maps.maps.size(); ++m) {
      const layers::AttentionMap& map = step_maps.maps[m];
      if (map.kind != layers::AttentionKind::cross) continue;
      ++cross_maps;
      const int64_t heads = map.weights.dim(1);
      REQUIRE(map.weights.shape() == Shape{batch.size, heads, 1, source});
      std::vector<float> rows = map.weights.to_vector();
      const std::vector<float>& expected = full_cross.at(map.layer);
      for (int64_t bh = 0; bh < batch.size * heads; ++bh)
        for (int64_t s = 0; s < source; ++s)
          CHECK(rows[bh * source + s] == Approx(expected[(bh * length + t) * source + s]).margin(1e-5));
    }
    CHECK(cross_maps == int(full_cross.size()));
  }
}

TEST_CASE("beam search with beam 1 equals greedy search", "[models][invariants][decode]") {
  TinyModelKind kind = GENERATE(from_range(testing::tiny_model_kinds()));
  INFO(kind.label);
  auto model = tiny_model(kind, 5);
  data::Batch batch = batch_of(make_examples(testing::kTinyPairs));
  auto beam = decode::beam_search(*model, batch, search_options(1));
  auto greedy = decode::greedy_search(*model, batch, search_options(1));
  REQUIRE(beam.size() == greedy.size());
  for (size_t i = 0; i < beam.size(); ++i) {
    CHECK(beam[i].at(0).tokens == greedy[i].tokens);
    CHECK(beam[i].at(0).log_prob == Approx(greedy[i].log_prob).margin(1e-4));
  }
}

TEST_CASE("attention rows sum to one over the visible keys - hidden keys get exactly 0", "[models][invariants]") {
  TinyModelKind kind = GENERATE(from_range(testing::tiny_model_kinds()));
  INFO(kind.label);
  auto model = tiny_model(kind);
  data::Batch batch = batch_of(make_examples(testing::kTinyPairs), 8);
  layers::AttentionMaps maps = decode::teacher_forced_attention(*model, batch);
  REQUIRE_FALSE(maps.maps.empty());
  for (const auto& map : maps.maps) {
    INFO(layers::attention_kind_name(map.kind) << " layer " << map.layer);
    const bool encoder = map.kind == layers::AttentionKind::encoder_self;
    const int64_t heads = map.weights.dim(1), queries = map.weights.dim(2), keys = map.weights.dim(3);
    REQUIRE(map.weights.shape() == Shape{batch.size, heads, encoder ? batch.src_len : batch.tgt_len, keys});
    std::vector<float> weights = map.weights.to_vector();
    int hidden = 0;
    for (int64_t b = 0; b < batch.size; ++b)
      for (int64_t h = 0; h < heads; ++h)
        for (int64_t q = 0; q < (encoder ? batch.src_lengths[b] : batch.tgt_lengths[b]); ++q) {
          const float* row = weights.data() + ((b * heads + h) * queries + q) * keys;
          double sum = 0.0;
          for (int64_t k = 0; k < keys; ++k) {
            sum += row[k];
            if (!hidden_key(map, batch, b, q, k)) continue;
            CHECK(row[k] == 0.f);
            ++hidden;
          }
          CHECK(sum == Approx(1.0).margin(1e-5));
        }
    CHECK(hidden > 0);
  }
}

TEST_CASE("save then load into a model built with another seed gives identical logits", "[models][invariants][io]") {
  TinyModelKind kind = GENERATE(from_range(testing::tiny_model_kinds()));
  INFO(kind.label);
  attn::testing::TempDir dir;
  // Separate untied embeddings: every kind of parameter, the output projection too.
  io::Config config = testing::tiny_model_config(kind, 1);
  config.model.shared_embeddings = config.model.tied_embeddings = false;
  auto saved = models::make_model(config, {kTinyVocab, kTinyVocab});
  config.train.seed = 2;
  auto loaded = models::make_model(config, {kTinyVocab, kTinyVocab});
  data::Batch batch = batch_of(make_examples(testing::kTinyPairs));
  std::vector<float> expected = logits_of(*saved, batch);
  REQUIRE(logits_of(*loaded, batch) != expected);
  io::save_checkpoint(dir.file("model.safetensors"), saved->parameters());
  io::load_parameters(io::load_checkpoint(dir.file("model.safetensors")), loaded->parameters());
  CHECK(logits_of(*loaded, batch) == expected);  // same values, same shapes: bit-identical
}

TEST_CASE("the fused loss over forward_hidden equals cross_entropy over forward's logits - gradients too",
          "[models][invariants]") {
  TinyModelKind kind = GENERATE(from_range(testing::tiny_model_kinds()));
  bool tied = GENERATE(true, false);
  INFO(kind.label << (tied ? " tied" : " untied"));
  io::Config config = testing::tiny_model_config(kind, 5);
  config.model.tied_embeddings = tied;
  auto model = models::make_model(config, {kTinyVocab, kTinyVocab});
  data::Batch batch = batch_of(make_examples(testing::kTinyPairs));
  ParameterStore& store = model->parameters();
  auto loss_and_gradients = [&](models::LossKernel kernel) {
    store.zero_grad();
    Tape tape;
    ops::CrossEntropyResult ce = models::sequence_loss(*model, layers::RunContext{tape}, batch, {0.1f, kernel});
    tape.backward(ce.loss, 0.5f);
    return std::pair{ce, std::vector<float>(store.grads(), store.grads() + store.size())};
  };
  auto [fused, fused_grads] = loss_and_gradients(models::LossKernel::fused);
  auto [unfused, unfused_grads] = loss_and_gradients(models::LossKernel::unfused);
  // One chunk (V = 11): the loss's own sums are cross_entropy's. The logits may still round
  // differently when the tied table's product is the batched matmul (unfused) rather than one
  // 2-D product (fused): a few f32 ulps of the loss, a relative 1e-5 of the largest gradient.
  CHECK(fused.tokens == unfused.tokens);
  CHECK(fused.loss.item() == Approx(unfused.loss.item()).epsilon(1e-6));
  CHECK(fused.nll_sum == Approx(unfused.nll_sum).epsilon(1e-6));
  float largest = 0.f, difference = 0.f;
  for (size_t i = 0; i < fused_grads.size(); ++i) {
    largest = std::max(largest, std::fabs(unfused_grads[i]));
    difference = std::max(difference, std::fabs(fused_grads[i] - unfused_grads[i]));
  }
  CHECK(largest > 0.f);
  CHECK(difference <= 1e-5f * largest);
}
