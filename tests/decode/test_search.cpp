#include <algorithm>
#include <cmath>
#include <cstring>
#include <numeric>
#include <set>

#include <catch2/catch.hpp>

#include "core/rng.h"
#include "data/vocab.h"
#include "decode/search.h"
#include "decode/translator.h"
#include "grad_check.h"
#include "models/tiny_models.h"
#include "ops/log_softmax.h"

using namespace attn;

namespace {

// A random model with untied, separate embeddings: with tied ones, a random post-norm
// Transformer mostly repeats its last token forever, which would leave the eos paths untested.
// With this seed the greedy outputs of kSources end in eos at different steps, and one
// sentence runs into its length limit.
std::unique_ptr<models::TransformerModel> search_model() {
  models::TransformerOptions options = attn::testing::tiny_transformer_options();
  options.layer.width = 16;
  options.layer.ffn_width = 32;
  options.shared_embeddings = false;
  options.tied_embeddings = false;
  return std::make_unique<models::TransformerModel>(options, 3);
}

// Source sentences of different lengths (eos included), so that one batch holds padding and
// its sentences reach their length limits at different steps.
const std::vector<std::vector<int32_t>> kSources = {
    {4, 5, 6, data::kEosId}, {7, data::kEosId}, {8, 9, 10, 4, 5, 6, 7, 8, 9, data::kEosId}, {10, 9, data::kEosId}};

data::Batch batch_of_sources(const std::vector<std::vector<int32_t>>& sources) {
  std::vector<const std::vector<int32_t>*> pointers;
  for (const auto& source : sources) pointers.push_back(&source);
  return decode::source_batch(pointers);
}

decode::SearchOptions options_with_beam(int beam, int nbest = 1) {
  decode::SearchOptions options;
  options.beam = beam;
  options.nbest = nbest;
  options.bos_id = data::kBosId;
  options.eos_id = data::kEosId;
  return options;
}

bool ends_in_eos(const decode::Hypothesis& hypothesis) {
  return !hypothesis.tokens.empty() && hypothesis.tokens.back() == data::kEosId;
}

}  // namespace

TEST_CASE("beam search with beam 1 finds the greedy tokens", "[decode][search]") {
  auto model = search_model();
  data::Batch batch = batch_of_sources(kSources);
  decode::SearchOptions options = options_with_beam(1);
  auto greedy = decode::greedy_search(*model, batch, options);
  auto beam = decode::beam_search(*model, batch, options);
  REQUIRE(greedy.size() == kSources.size());
  REQUIRE(beam.size() == kSources.size());
  int eos_endings = 0, cut_at_limit = 0;  // both paths must be exercised
  for (size_t s = 0; s < kSources.size(); ++s) {
    INFO("sentence " << s);
    ends_in_eos(greedy[s]) ? ++eos_endings : ++cut_at_limit;
    REQUIRE(beam[s].size() == 1);
    CHECK(beam[s][0].tokens == greedy[s].tokens);
    CHECK(beam[s][0].log_prob == Approx(greedy[s].log_prob).margin(1e-4));
  }
  CHECK(eos_endings >= 2);
  CHECK(cut_at_limit >= 1);
}

TEST_CASE("beam search returns nbest hypotheses sorted by score - each finished", "[decode][search]") {
  auto model = search_model();
  data::Batch batch = batch_of_sources(kSources);
  decode::SearchOptions options = options_with_beam(4, 4);
  options.length_penalty = 0.6f;
  auto found = decode::beam_search(*model, batch, options);
  REQUIRE(found.size() == kSources.size());
  int eos_endings = 0;
  for (size_t s = 0; s < kSources.size(); ++s) {
    INFO("sentence " << s);
    const auto& nbest = found[s];
    REQUIRE(nbest.size() == 4);
    int64_t limit = decode::max_output_length(int64_t(kSources[s].size()), options);
    for (size_t i = 0; i < nbest.size(); ++i) {
      const auto& hypothesis = nbest[i];
      CHECK((ends_in_eos(hypothesis) || int64_t(hypothesis.tokens.size()) == limit));
      eos_endings += ends_in_eos(hypothesis);
      CHECK(std::isfinite(hypothesis.score));
      // The score is the log-probability over the GNMT length penalty.
      float penalty = decode::length_penalty(int64_t(hypothesis.tokens.size()), options.length_penalty);
      CHECK(hypothesis.score == Approx(hypothesis.log_prob / penalty));
      if (i > 0) CHECK(nbest[i - 1].score >= hypothesis.score);
      for (size_t j = 0; j < i; ++j) CHECK(nbest[j].tokens != hypothesis.tokens);  // distinct
    }
  }
  CHECK(eos_endings >= 4);
}

namespace {

// Log-probabilities (V) of every continuation of `prefix` (bos first) for one source sentence.
std::vector<float> next_log_probs(const models::Seq2SeqModel& model, const std::vector<int32_t>& source,
                                  const std::vector<int32_t>& prefix) {
  Tape tape;
  NoGradScope no_grad(tape);
  layers::RunContext ctx{tape};
  auto state = model.start(ctx, batch_of_sources({source}));
  Tensor logits;
  for (int32_t token : prefix) logits = model.step(ctx, *state, {token});
  ops::log_softmax_rows_in_place(logits);
  return logits.to_vector();
}

}  // namespace

TEST_CASE("beam search wider than the vocabulary finds the best output of two tokens", "[decode][search]") {
  // With K >= V nothing is pruned before the length limit of 2, so the search must return the
  // best of all V x V outputs (and of eos alone): checked against the enumeration of all of them.
  auto model = search_model();
  const int32_t vocab = int32_t(attn::testing::kTinyVocab);
  decode::SearchOptions options = options_with_beam(vocab);
  options.length_penalty = 0.f;  // scores are log-probabilities
  options.max_len_ratio = 0.f;
  options.max_len_extra = 2;
  for (const auto& source : kSources) {
    std::vector<float> first = next_log_probs(*model, source, {data::kBosId});
    std::vector<int32_t> best_tokens = {data::kEosId};
    float best = first[data::kEosId];
    for (int32_t t1 = 0; t1 < vocab; ++t1) {
      if (t1 == data::kEosId) continue;
      std::vector<float> second = next_log_probs(*model, source, {data::kBosId, t1});
      for (int32_t t2 = 0; t2 < vocab; ++t2)
        if (first[t1] + second[t2] > best) best = first[t1] + second[t2], best_tokens = {t1, t2};
    }
    auto found = decode::beam_search(*model, batch_of_sources({source}), options);
    REQUIRE(found.size() == 1);
    CHECK(found[0][0].tokens == best_tokens);
    CHECK(found[0][0].log_prob == Approx(best).margin(1e-4));
  }
}

namespace {

// Beam search as the header of decode/beam_search.cpp defines its candidates, run to the
// length limit with every finished hypothesis kept: what no stopping rule may change.
std::vector<decode::Hypothesis> search_to_the_limit(const models::Seq2SeqModel& model,
                                                    const std::vector<int32_t>& source, int beam, int64_t limit) {
  struct Live {
    std::vector<int32_t> tokens;
    float log_prob;
  };
  std::vector<Live> live{{{}, 0.f}};
  std::vector<decode::Hypothesis> finished;
  for (int64_t step = 0; step < limit && !live.empty(); ++step) {
    std::vector<Live> candidates;
    for (const Live& hypothesis : live) {
      std::vector<int32_t> prefix{data::kBosId};
      prefix.insert(prefix.end(), hypothesis.tokens.begin(), hypothesis.tokens.end());
      const std::vector<float> log_probs = next_log_probs(model, source, prefix);
      for (int32_t token = 0; token < int32_t(log_probs.size()); ++token) {
        Live candidate{hypothesis.tokens, hypothesis.log_prob + log_probs[token]};
        candidate.tokens.push_back(token);
        candidates.push_back(std::move(candidate));
      }
    }
    std::stable_sort(candidates.begin(), candidates.end(),
                     [](const Live& a, const Live& b) { return a.log_prob > b.log_prob; });
    std::vector<Live> next;
    for (size_t rank = 0; rank < candidates.size() && int(next.size()) < beam; ++rank) {
      if (candidates[rank].tokens.back() == data::kEosId) {
        if (int(rank) < beam)
          finished.push_back({candidates[rank].tokens, candidates[rank].log_prob, candidates[rank].log_prob});
      } else {
        next.push_back(candidates[rank]);
      }
    }
    live = std::move(next);
  }
  for (const Live& hypothesis : live) finished.push_back({hypothesis.tokens, hypothesis.log_prob, hypothesis.log_prob});
  std::stable_sort(finished.begin(), finished.end(),
                   [](const decode::Hypothesis& a, const decode::Hypothesis& b) { return a.score > b.score; });
  return finished;
}

}  // namespace

TEST_CASE("without a length penalty beam search stops when decided - with the n best of a search to the limit",
          "[decode][search]") {
  auto model = search_model();
  decode::SearchOptions options = options_with_beam(3, 2);
  options.length_penalty = 0.f;
  options.max_len_ratio = 1.f;
  options.max_len_extra = 4;
  int eos_endings = 0;
  // With these four, K finished hypotheses come before the n best are decided: a search that
  // stops at K finished returns another second best.
  std::vector<std::vector<int32_t>> sources = kSources;
  for (const std::vector<int32_t>& source :
       std::vector<std::vector<int32_t>>{{10, 6, 8}, {10, 8, 6}, {8, 6, 10}, {9, 10, 4}}) {
    sources.push_back(source);
    sources.back().push_back(data::kEosId);
  }
  for (const auto& source : sources) {
    INFO("source of " << source.size() << " tokens");
    const int64_t limit = decode::max_output_length(int64_t(source.size()), options);
    const std::vector<decode::Hypothesis> expected = search_to_the_limit(*model, source, options.beam, limit);
    const auto found = decode::beam_search(*model, batch_of_sources({source}), options);
    REQUIRE(found.size() == 1);
    REQUIRE(found[0].size() == 2);
    REQUIRE(expected.size() >= 2);
    for (size_t i = 0; i < 2; ++i) {
      CHECK(found[0][i].tokens == expected[i].tokens);
      CHECK(found[0][i].log_prob == Approx(expected[i].log_prob).margin(1e-4));
    }
    eos_endings += ends_in_eos(found[0][0]);
  }
  CHECK(eos_endings >= 2);  // the eos paths are exercised
}

TEST_CASE("search never exceeds max_len_ratio * source length + max_len_extra", "[decode][search]") {
  auto model = search_model();
  data::Batch batch = batch_of_sources(kSources);
  decode::SearchOptions options = options_with_beam(3, 2);
  options.max_len_ratio = 0.5f;
  options.max_len_extra = 2;
  SECTION("with a real eos: at most the limit") {}
  SECTION("with an eos the model cannot produce: exactly the limit") { options.eos_id = -1; }
  auto greedy = decode::greedy_search(*model, batch, options);
  auto beam = decode::beam_search(*model, batch, options);
  for (size_t s = 0; s < kSources.size(); ++s) {
    INFO("sentence " << s << " eos " << options.eos_id);
    int64_t limit = int64_t(0.5f * float(kSources[s].size())) + 2;
    REQUIRE(decode::max_output_length(int64_t(kSources[s].size()), options) == limit);
    std::vector<decode::Hypothesis> all = beam[s];
    all.push_back(greedy[s]);
    for (const auto& hypothesis : all) {
      CHECK(int64_t(hypothesis.tokens.size()) <= limit);
      if (options.eos_id < 0)
        CHECK(int64_t(hypothesis.tokens.size()) == limit);
      else
        CHECK((ends_in_eos(hypothesis) || int64_t(hypothesis.tokens.size()) == limit));
    }
  }
}

TEST_CASE("greedy and beam search give the same result for a batch as for each sentence alone", "[decode][search]") {
  auto model = search_model();
  data::Batch batch = batch_of_sources(kSources);
  decode::SearchOptions options = options_with_beam(3, 2);
  auto greedy = decode::greedy_search(*model, batch, options);
  auto beam = decode::beam_search(*model, batch, options);
  for (size_t s = 0; s < kSources.size(); ++s) {
    INFO("sentence " << s);
    data::Batch alone = batch_of_sources({kSources[s]});
    auto greedy_alone = decode::greedy_search(*model, alone, options);
    auto beam_alone = decode::beam_search(*model, alone, options);
    CHECK(greedy_alone[0].tokens == greedy[s].tokens);
    CHECK(greedy_alone[0].score == Approx(greedy[s].score).margin(1e-4));
    REQUIRE(beam_alone[0].size() == beam[s].size());
    for (size_t i = 0; i < beam[s].size(); ++i) {
      CHECK(beam_alone[0][i].tokens == beam[s][i].tokens);
      CHECK(beam_alone[0][i].score == Approx(beam[s][i].score).margin(1e-4));
    }
  }
}

namespace {

decode::SearchOptions sampling_options(uint64_t seed, float temperature = 1.f, int top_k = 0, float top_p = 1.f) {
  decode::SearchOptions options = options_with_beam(1);
  options.sampling.enabled = true;
  options.sampling.seed = seed;
  options.sampling.temperature = temperature;
  options.sampling.top_k = top_k;
  options.sampling.top_p = top_p;
  return options;
}

std::vector<std::vector<int32_t>> tokens_of(const std::vector<decode::Hypothesis>& hypotheses) {
  std::vector<std::vector<int32_t>> tokens;
  for (const auto& hypothesis : hypotheses) tokens.push_back(hypothesis.tokens);
  return tokens;
}

const std::vector<uint64_t> kStreams = {1, 2, 3, 4};  // one per kSources sentence

// log(0.5), log(0.3), log(0.2): three tokens with known probabilities.
const std::vector<float> kThree = {std::log(0.5f), std::log(0.3f), std::log(0.2f)};

}  // namespace

TEST_CASE("sampling with the same seed repeats - whatever the batch - and another seed differs",
          "[decode][search][sampling]") {
  auto model = search_model();
  data::Batch batch = batch_of_sources(kSources);
  const auto first = tokens_of(decode::sample_search(*model, batch, sampling_options(7, 2.f), kStreams));
  CHECK(tokens_of(decode::sample_search(*model, batch, sampling_options(7, 2.f), kStreams)) == first);
  CHECK(tokens_of(decode::sample_search(*model, batch, sampling_options(8, 2.f), kStreams)) != first);
  for (size_t s = 0; s < kSources.size(); ++s) {
    INFO("sentence " << s);
    auto alone =
        decode::sample_search(*model, batch_of_sources({kSources[s]}), sampling_options(7, 2.f), {kStreams[s]});
    CHECK(alone[0].tokens == first[s]);
  }
}

TEST_CASE("sampling with top-k 1 is greedy search", "[decode][search][sampling]") {
  auto model = search_model();
  data::Batch batch = batch_of_sources(kSources);
  auto greedy = decode::greedy_search(*model, batch, options_with_beam(1));
  auto sampled = decode::sample_search(*model, batch, sampling_options(3, 5.f, 1), kStreams);
  CHECK(tokens_of(sampled) == tokens_of(greedy));
  for (size_t s = 0; s < kSources.size(); ++s) CHECK(sampled[s].log_prob == greedy[s].log_prob);
}

TEST_CASE("top-k sampling never emits a token outside the k best", "[decode][search][sampling]") {
  Rng rng(11);
  std::vector<float> row(50);
  for (float& value : row) value = rng.normal();
  std::vector<int32_t> order(row.size());
  std::iota(order.begin(), order.end(), 0);
  std::sort(order.begin(), order.end(), [&](int32_t a, int32_t b) { return row[a] > row[b]; });
  const std::set<int32_t> best(order.begin(), order.begin() + 5);
  decode::SamplingOptions sampling;
  sampling.top_k = 5;
  sampling.temperature = 10.f;  // nearly uniform: the other 45 tokens would be drawn often
  std::set<int32_t> drawn;
  for (int i = 0; i < 2000; ++i)
    drawn.insert(decode::sample_token(row.data(), int64_t(row.size()), sampling, rng.uniform()));
  CHECK(drawn == best);  // every one of the k best, and nothing else
}

TEST_CASE("sampling draws from softmax of log-probabilities over the temperature - cut by top-p",
          "[decode][search][sampling]") {
  decode::SamplingOptions sampling;
  // Temperature 1: the probabilities 0.5, 0.3, 0.2 as they are.
  CHECK(decode::sample_token(kThree.data(), 3, sampling, 0.49f) == 0);
  CHECK(decode::sample_token(kThree.data(), 3, sampling, 0.51f) == 1);
  CHECK(decode::sample_token(kThree.data(), 3, sampling, 0.81f) == 2);
  CHECK(decode::sample_token(kThree.data(), 3, sampling, 0.9999f) == 2);
  // Temperature 2: proportional to sqrt(p): 0.4155, 0.3218, 0.2628 (at 1, 0.45 would pick 0).
  sampling.temperature = 2.f;
  CHECK(decode::sample_token(kThree.data(), 3, sampling, 0.40f) == 0);
  CHECK(decode::sample_token(kThree.data(), 3, sampling, 0.45f) == 1);
  CHECK(decode::sample_token(kThree.data(), 3, sampling, 0.75f) == 2);
  // Top-p 0.6 keeps 0.5 + 0.3, renormalised to 0.625, 0.375: token 2 never comes.
  sampling.temperature = 1.f;
  sampling.top_p = 0.6f;
  CHECK(decode::sample_token(kThree.data(), 3, sampling, 0.6f) == 0);
  CHECK(decode::sample_token(kThree.data(), 3, sampling, 0.65f) == 1);
  CHECK(decode::sample_token(kThree.data(), 3, sampling, 0.9999f) == 1);
  // Top-p 0.45 keeps the most likely token alone.
  sampling.top_p = 0.45f;
  CHECK(decode::sample_token(kThree.data(), 3, sampling, 0.9999f) == 0);
}

TEST_CASE("best_continuations equals a stable sort of every beam-token score - ties and all", "[decode][search]") {
  // 3 beams over 1,000 tokens (not a multiple of the scan chunk); scores on a coarse grid, so
  // many tie, and one beam far behind, so whole chunks fall below the threshold.
  const int64_t width = 1000;
  const std::vector<float> beams = {-1.5f, -0.25f, -40.f};
  Rng rng(11);
  std::vector<float> log_probs(size_t(width) * beams.size());
  for (float& value : log_probs) value = -std::round(rng.uniform() * 80.f) / 8.f;
  // Scored as beam search does, from logits and their row normalisers: the logits here are
  // the grid values, and a token's log-probability is its logit minus its row's log-sum-exp.
  const Tensor logits = Tensor::from_vector({int64_t(beams.size()), width}, log_probs);
  const ops::RowLogSumExp sums = ops::log_sum_exp_rows(logits, decode::kScanChunk);
  const decode::StepScores scores{logits.data(), width, sums.log_sum.data(), sums.chunk_max.data()};
  for (size_t count : {size_t(1), size_t(10), size_t(64), size_t(3000)}) {
    INFO(count << " kept");
    std::vector<decode::Continuation> expected;
    for (size_t b = 0; b < beams.size(); ++b)
      for (int64_t v = 0; v < width; ++v)
        expected.push_back({beams[b] + (log_probs[b * width + v] - sums.log_sum[b]), int(b), int32_t(v)});
    std::stable_sort(
        expected.begin(), expected.end(),
        [](const decode::Continuation& a, const decode::Continuation& c) { return a.log_prob > c.log_prob; });
    expected.resize(std::min(count, expected.size()));
    auto found = decode::best_continuations(scores, beams, count);
    REQUIRE(found.size() == expected.size());
    for (size_t i = 0; i < expected.size(); ++i) {
      CHECK(found[i].log_prob == expected[i].log_prob);
      CHECK(found[i].beam == expected[i].beam);
      CHECK(found[i].token == expected[i].token);
    }
  }
}

TEST_CASE("beam search gives every model kind the same result for a batch as for each sentence alone",
          "[decode][search]") {
  // Sentences of different lengths finish at different steps, so the decoding state's rows
  // change sentence (a source-side gather) on some steps and only move within one on others.
  attn::testing::TinyModelKind kind = GENERATE(from_range(attn::testing::tiny_model_kinds()));
  INFO(kind.label);
  auto model = attn::testing::tiny_model(kind, 7);
  data::Batch batch = batch_of_sources(kSources);
  decode::SearchOptions options = options_with_beam(3, 3);
  auto together = decode::beam_search(*model, batch, options);
  for (size_t s = 0; s < kSources.size(); ++s) {
    INFO("sentence " << s);
    auto alone = decode::beam_search(*model, batch_of_sources({kSources[s]}), options);
    REQUIRE(alone[0].size() == together[s].size());
    for (size_t i = 0; i < together[s].size(); ++i) {
      CHECK(alone[0][i].tokens == together[s][i].tokens);
      CHECK(alone[0][i].score == Approx(together[s][i].score).margin(1e-4));
    }
  }
}

namespace {

// The hypotheses of `options`' search (greedy, beam or sampling: decode::search) of kSources,
// every n-best one.
std::vector<decode::Hypothesis> all_hypotheses(const models::Seq2SeqModel& model,
                                               const decode::SearchOptions& options) {
  std::vector<decode::Hypothesis> all;
  for (auto& nbest : decode::search(model, batch_of_sources(kSources), options, kStreams))
    for (auto& hypothesis : nbest) all.push_back(std::move(hypothesis));
  return all;
}

struct SearchKind {
  std::string label;
  decode::SearchOptions options;
};

std::vector<SearchKind> search_kinds() {
  return {{"greedy", options_with_beam(1)}, {"beam", options_with_beam(3, 3)}, {"sampling", sampling_options(5)}};
}

int64_t length_without_eos(const decode::Hypothesis& hypothesis) {
  return int64_t(hypothesis.tokens.size()) - (ends_in_eos(hypothesis) ? 1 : 0);
}

// Whether some n-gram occurs twice in the tokens.
bool repeats_ngram(const std::vector<int32_t>& tokens, size_t n) {
  std::set<std::vector<int32_t>> seen;
  for (size_t i = 0; i + n <= tokens.size(); ++i)
    if (!seen.insert(std::vector<int32_t>(tokens.begin() + i, tokens.begin() + i + n)).second) return true;
  return false;
}

}  // namespace

TEST_CASE("search dispatches to greedy - beam search or sampling", "[decode][search]") {
  auto model = search_model();
  data::Batch batch = batch_of_sources(kSources);
  auto greedy = decode::search(*model, batch, options_with_beam(1), kStreams);
  auto beam = decode::search(*model, batch, options_with_beam(3, 2), kStreams);
  auto sampled = decode::search(*model, batch, sampling_options(7, 2.f), kStreams);
  const auto greedy_alone = decode::greedy_search(*model, batch, options_with_beam(1));
  const auto beam_alone = decode::beam_search(*model, batch, options_with_beam(3, 2));
  const auto sampled_alone = decode::sample_search(*model, batch, sampling_options(7, 2.f), kStreams);
  REQUIRE(greedy.size() == kSources.size());
  for (size_t s = 0; s < kSources.size(); ++s) {
    INFO("sentence " << s);
    REQUIRE(greedy[s].size() == 1);
    REQUIRE(sampled[s].size() == 1);
    CHECK(greedy[s][0].tokens == greedy_alone[s].tokens);
    CHECK(sampled[s][0].tokens == sampled_alone[s].tokens);
    REQUIRE(beam[s].size() == beam_alone[s].size());
    for (size_t i = 0; i < beam[s].size(); ++i) CHECK(beam[s][i].tokens == beam_alone[s][i].tokens);
  }
}

TEST_CASE("min length keeps eos away until the output holds N tokens - in greedy - beam search and sampling",
          "[decode][search][logits_processor]") {
  auto model = search_model();
  constexpr int64_t kMinLength = 9;
  for (SearchKind kind : search_kinds()) {
    INFO(kind.label);
    int shorter_before = 0;  // unconstrained outputs the constraint must lengthen
    for (const auto& hypothesis : all_hypotheses(*model, kind.options))
      shorter_before += ends_in_eos(hypothesis) && length_without_eos(hypothesis) < kMinLength;
    CHECK(shorter_before >= 2);
    kind.options.min_length = int(kMinLength);
    for (const auto& hypothesis : all_hypotheses(*model, kind.options)) {
      INFO("output of " << hypothesis.tokens.size() << " tokens");
      CHECK(length_without_eos(hypothesis) >= kMinLength);
      CHECK(std::isfinite(hypothesis.log_prob));
    }
  }
}

TEST_CASE("min length above the length limit: the limit wins", "[decode][search][logits_processor]") {
  auto model = search_model();
  for (SearchKind kind : search_kinds()) {
    INFO(kind.label);
    kind.options.min_length = 1000;
    const auto found = decode::search(*model, batch_of_sources(kSources), kind.options, kStreams);
    for (size_t s = 0; s < kSources.size(); ++s)
      for (const auto& hypothesis : found[s]) {
        CHECK_FALSE(ends_in_eos(hypothesis));
        CHECK(int64_t(hypothesis.tokens.size()) ==
              decode::max_output_length(int64_t(kSources[s].size()), kind.options));
      }
  }
}

TEST_CASE("no-repeat-ngram keeps every n-gram of an output unique - in greedy - beam search and sampling",
          "[decode][search][logits_processor]") {
  // A random model with tied embeddings mostly repeats its last token, so unconstrained
  // outputs repeat bigrams and trigrams.
  auto model = attn::testing::tiny_transformer(3);
  for (size_t n : {size_t(1), size_t(2), size_t(3)}) {
    for (SearchKind kind : search_kinds()) {
      INFO(kind.label << ", n-grams of " << n);
      int repeating_before = 0;
      for (const auto& hypothesis : all_hypotheses(*model, kind.options))
        repeating_before += repeats_ngram(hypothesis.tokens, n);
      CHECK(repeating_before >= 2);
      kind.options.no_repeat_ngram = int(n);
      for (const auto& hypothesis : all_hypotheses(*model, kind.options)) {
        CHECK_FALSE(repeats_ngram(hypothesis.tokens, n));
        CHECK(std::isfinite(hypothesis.log_prob));
      }
    }
  }
}

TEST_CASE("a hypothesis whose every next token is forbidden ends where it is", "[decode][search][logits_processor]") {
  // No eos before 1000 tokens and no token twice: after the 10 other ids of the tiny
  // vocabulary nothing is left.
  auto model = search_model();
  for (SearchKind kind : search_kinds()) {
    INFO(kind.label);
    kind.options.min_length = 1000;
    kind.options.no_repeat_ngram = 1;
    kind.options.max_len_extra = 1000;
    for (const auto& hypothesis : all_hypotheses(*model, kind.options)) {
      CHECK(int64_t(hypothesis.tokens.size()) == attn::testing::kTinyVocab - 1);  // every id but eos, once
      CHECK_FALSE(ends_in_eos(hypothesis));
      CHECK_FALSE(repeats_ngram(hypothesis.tokens, 1));
      CHECK(std::isfinite(hypothesis.log_prob));
    }
  }
}

namespace {

bool starts_with(const std::vector<int32_t>& tokens, const std::vector<int32_t>& prefix) {
  return tokens.size() >= prefix.size() && std::equal(prefix.begin(), prefix.end(), tokens.begin());
}

// Whether two searches found the same hypotheses, scores bit for bit.
void check_identical(const std::vector<std::vector<decode::Hypothesis>>& a,
                     const std::vector<std::vector<decode::Hypothesis>>& b) {
  REQUIRE(a.size() == b.size());
  for (size_t s = 0; s < a.size(); ++s) {
    REQUIRE(a[s].size() == b[s].size());
    for (size_t i = 0; i < a[s].size(); ++i) {
      CHECK(a[s][i].tokens == b[s][i].tokens);
      CHECK(std::memcmp(&a[s][i].log_prob, &b[s][i].log_prob, sizeof(float)) == 0);
      CHECK(std::memcmp(&a[s][i].score, &b[s][i].score, sizeof(float)) == 0);
    }
  }
}

}  // namespace

TEST_CASE("a repetition penalty of 1 and an empty prefix change no output - bit for bit", "[decode][search]") {
  auto model = search_model();
  const data::Batch batch = batch_of_sources(kSources);
  for (SearchKind kind : search_kinds()) {
    INFO(kind.label);
    const auto plain = decode::search(*model, batch, kind.options, kStreams);
    decode::SearchOptions same = kind.options;
    same.repetition_penalty = 1.f;
    same.prefix = {};
    check_identical(decode::search(*model, batch, same, kStreams), plain);
    // Each sentence's empty prefix.
    check_identical(decode::search(*model, batch, same, kStreams, decode::OutputPrefixes(kSources.size())), plain);
  }
}

TEST_CASE("every output starts with the prefix - beam search's n-best too - in every search", "[decode][search]") {
  auto model = search_model();
  const std::vector<int32_t> prefix = {9, 4, 4};
  for (SearchKind kind : search_kinds()) {
    INFO(kind.label);
    kind.options.prefix = prefix;
    for (const auto& hypothesis : all_hypotheses(*model, kind.options)) {
      CHECK(starts_with(hypothesis.tokens, prefix));
      CHECK(std::isfinite(hypothesis.log_prob));
    }
  }
}

TEST_CASE("each sentence's own prefix gives what that prefix gives the sentence alone", "[decode][search]") {
  auto model = search_model();
  const decode::OutputPrefixes prefixes = {{5}, {}, {6, 7, 8}, {10, 10}};
  for (SearchKind kind : search_kinds()) {
    INFO(kind.label);
    const auto found = decode::search(*model, batch_of_sources(kSources), kind.options, kStreams, prefixes);
    for (size_t s = 0; s < kSources.size(); ++s) {
      INFO("sentence " << s);
      decode::SearchOptions alone = kind.options;
      alone.prefix = prefixes[s];
      const auto expected = decode::search(*model, batch_of_sources({kSources[s]}), alone, {kStreams[s]});
      REQUIRE(found[s].size() == expected[0].size());
      for (size_t i = 0; i < found[s].size(); ++i) {
        CHECK(starts_with(found[s][i].tokens, prefixes[s]));
        CHECK(found[s][i].tokens == expected[0][i].tokens);
        CHECK(found[s][i].score == Approx(expected[0][i].score).margin(1e-4));
      }
    }
  }
}
