// EnsembleModel: the mean of its members' log-probabilities, step by step, through every search.
#include <cmath>
#include <memory>
#include <vector>

#include <catch2/catch.hpp>

#include "decode/search.h"
#include "models/ensemble.h"
#include "models/model_factory.h"
#include "models/tiny_models.h"
#include "ops/log_softmax.h"

using namespace attn;
using attn::testing::kTinyVocab;

namespace {

const testing::TinyModelKind kTransformer{"transformer", ModelType::transformer, CellType::gru};
const testing::TinyModelKind kRnn{"rnn gru", ModelType::rnn, CellType::gru};

data::Batch tiny_source_batch() { return testing::batch_of(testing::make_examples(testing::kTinyPairs)); }

decode::SearchOptions beam_options(int beam) {
  decode::SearchOptions options;
  options.beam = beam;
  options.nbest = beam;
  options.max_len_extra = 4;
  return options;
}

// Row-wise log-probabilities (R, V) of one step of `model` from its own `state`.
std::vector<float> step_log_probs(const models::Seq2SeqModel& model, const layers::RunContext& ctx,
                                  models::DecoderState& state, const std::vector<int32_t>& previous) {
  Tensor logits = model.step(ctx, state, previous);
  ops::log_softmax_rows_in_place(logits);
  return std::vector<float>(logits.data(), logits.data() + logits.numel());
}

std::vector<float> step_output(const models::Seq2SeqModel& model, const layers::RunContext& ctx,
                               models::DecoderState& state, const std::vector<int32_t>& previous) {
  Tensor out = model.step(ctx, state, previous);
  return std::vector<float>(out.data(), out.data() + out.numel());
}

void check_same_hypotheses(const std::vector<decode::Hypothesis>& ensemble,
                           const std::vector<decode::Hypothesis>& single) {
  REQUIRE(ensemble.size() == single.size());
  for (size_t i = 0; i < single.size(); ++i) {
    INFO("hypothesis " << i);
    CHECK(ensemble[i].tokens == single[i].tokens);
    CHECK(ensemble[i].log_prob == Approx(single[i].log_prob).margin(1e-4));
    CHECK(ensemble[i].score == Approx(single[i].score).margin(1e-4));
  }
}

}  // namespace

TEST_CASE("an ensemble of a model with itself decodes exactly as the model", "[models][ensemble]") {
  const auto kind = GENERATE(kTransformer, kRnn);
  INFO(kind.label);
  auto model = testing::tiny_model(kind, 5);
  models::EnsembleModel twice({model.get(), model.get()});
  const data::Batch batch = tiny_source_batch();

  const std::vector<decode::Hypothesis> greedy = decode::greedy_search(*model, batch, beam_options(1));
  check_same_hypotheses(decode::greedy_search(twice, batch, beam_options(1)), greedy);
  const auto beam = decode::beam_search(*model, batch, beam_options(3));
  const auto ensemble_beam = decode::beam_search(twice, batch, beam_options(3));
  REQUIRE(ensemble_beam.size() == beam.size());
  for (size_t s = 0; s < beam.size(); ++s) {
    INFO("sentence " << s);
    check_same_hypotheses(ensemble_beam[s], beam[s]);
  }
}

TEST_CASE("an ensemble's step is the weighted mean of its members' log-probabilities - a Transformer with an RNN",
          "[models][ensemble]") {
  auto transformer = testing::tiny_model(kTransformer, 3);
  auto rnn = testing::tiny_model(kRnn, 4);
  const bool weighted = GENERATE(false, true);
  INFO((weighted ? "weights 3 1" : "equal weights"));
  models::EnsembleModel ensemble({transformer.get(), rnn.get()},
                                 weighted ? std::vector<float>{3.f, 1.f} : std::vector<float>{});
  const float w0 = weighted ? 0.75f : 0.5f, w1 = 1.f - w0;
  CHECK(ensemble.weights() == std::vector<float>{w0, w1});
  CHECK(ensemble.target_vocab_size() == kTinyVocab);

  Tape tape;
  NoGradScope no_grad(tape);
  layers::RunContext ctx{tape};
  const data::Batch batch = tiny_source_batch();
  auto state = ensemble.start(ctx, batch);
  auto transformer_state = transformer->start(ctx, batch);
  auto rnn_state = rnn->start(ctx, batch);
  REQUIRE(state->rows() == batch.size);

  std::vector<int32_t> previous(size_t(batch.size), data::kBosId);
  // Two steps, the second after reordering and repeating rows as beam search does: the rows
  // selected must move in every member's state alike.
  for (int step = 0; step < 2; ++step) {
    INFO("step " << step);
    const std::vector<float> mean = step_output(ensemble, ctx, *state, previous);
    const std::vector<float> a = step_log_probs(*transformer, ctx, *transformer_state, previous);
    const std::vector<float> b = step_log_probs(*rnn, ctx, *rnn_state, previous);
    REQUIRE(mean.size() == a.size());
    REQUIRE(mean.size() == previous.size() * size_t(kTinyVocab));
    for (size_t i = 0; i < mean.size(); ++i) REQUIRE(mean[i] == Approx(w0 * a[i] + w1 * b[i]).margin(1e-5));
    const std::vector<int64_t> rows = {3, 0, 0, 2, 1};
    for (models::DecoderState* s : {state.get(), transformer_state.get(), rnn_state.get()}) s->select_rows(rows);
    previous = {5, 6, 7, 8, 9};
  }
}

TEST_CASE("an ensemble's teacher-forced forward is the mean of its members' log-probabilities", "[models][ensemble]") {
  auto transformer = testing::tiny_model(kTransformer, 3);
  auto rnn = testing::tiny_model(kRnn, 4);
  models::EnsembleModel ensemble({transformer.get(), rnn.get()});
  const data::Batch batch = tiny_source_batch();
  Tape tape;
  NoGradScope no_grad(tape);
  layers::RunContext ctx{tape};
  const Tensor mean = ensemble.forward(ctx, batch);
  const Tensor a = ops::log_softmax(tape, transformer->forward(ctx, batch));
  const Tensor b = ops::log_softmax(tape, rnn->forward(ctx, batch));
  REQUIRE(mean.shape() == a.shape());
  for (int64_t i = 0; i < mean.numel(); ++i)
    REQUIRE(mean.data()[i] == Approx(0.5f * a.data()[i] + 0.5f * b.data()[i]).margin(1e-5));
}

TEST_CASE("an ensemble refuses forward_hidden: it has no single output projection", "[models][ensemble]") {
  auto transformer = testing::tiny_model(kTransformer, 3);
  models::EnsembleModel ensemble({transformer.get(), transformer.get()});
  Tape tape;
  CHECK_THROWS_WITH(ensemble.forward_hidden(layers::RunContext{tape}, tiny_source_batch()),
                    Catch::Contains("no single output projection"));
}

TEST_CASE("a Transformer and an RNN decode together as an ensemble", "[models][ensemble]") {
  auto transformer = testing::tiny_model(kTransformer, 3);
  auto rnn = testing::tiny_model(kRnn, 4);
  models::EnsembleModel ensemble({transformer.get(), rnn.get()});
  const data::Batch batch = tiny_source_batch();
  decode::SearchOptions options = beam_options(3);
  const auto found = decode::beam_search(ensemble, batch, options);
  REQUIRE(int64_t(found.size()) == batch.size);
  for (int64_t s = 0; s < batch.size; ++s) {
    INFO("sentence " << s);
    REQUIRE(found[size_t(s)].size() == 3);
    for (const decode::Hypothesis& hypothesis : found[size_t(s)]) {
      CHECK_FALSE(hypothesis.tokens.empty());
      CHECK(int64_t(hypothesis.tokens.size()) <= decode::max_output_length(batch.src_lengths[size_t(s)], options));
      CHECK(std::isfinite(hypothesis.log_prob));
      CHECK(hypothesis.log_prob <= 0.f);
    }
  }
  options.sampling.enabled = true;
  std::vector<uint64_t> streams(size_t(batch.size));
  CHECK(decode::sample_search(ensemble, batch, options, streams).size() == size_t(batch.size));
}

TEST_CASE("an ensemble refuses members with different target vocabularies and bad weights", "[models][ensemble]") {
  auto model = testing::tiny_model(kTransformer, 3);
  auto other = models::make_model(testing::tiny_model_config(kRnn, 4), {kTinyVocab + 2, kTinyVocab + 2});
  CHECK_THROWS_WITH(models::EnsembleModel({model.get(), other.get()}),
                    Catch::Contains("model 2 has a target vocabulary of 13 tokens, model 1 of 11") &&
                        Catch::Contains("must share their target vocabulary"));
  CHECK_THROWS_WITH(models::EnsembleModel({model.get(), model.get()}, {1.f}),
                    Catch::Contains("1 weights for 2 models"));
  CHECK_THROWS_WITH(models::EnsembleModel({model.get(), model.get()}, {1.f, 0.f}), Catch::Contains("must be above 0"));
}
