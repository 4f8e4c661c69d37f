// The repetition penalty and the target prefix in greedy search, beam search and sampling, on a
// bigram model whose logits are fixed per previous token, so that every score can be worked
// out by hand: the penalised logits, their log-softmax, the forced tokens' log-probabilities.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include <catch2/catch.hpp>

#include "data/vocab.h"
#include "decode/logits_processor.h"
#include "decode/search.h"
#include "decode/translator.h"

using namespace attn;

namespace {

constexpr int32_t kEos = data::kEosId, kBos = data::kBosId;
constexpr int32_t kA = 4, kB = 5;  // the two words
constexpr int64_t kWidth = 6;      // pad, unk, bos, eos, a, b

// Next-token logits after each previous token. Unpenalised, greedy search repeats a for ever;
// penalised by 2, a after a falls below b (1.0 < 1.5), and after a b eos stands out. Beam
// search's unlikely beams (after pad, unk or bos) see a flat row.
std::vector<float> logits_after(int32_t previous) {
  switch (previous) {
    case kBos:
      return {-9.f, -9.f, -9.f, 0.0f, 2.0f, 1.0f};
    case kA:
      return {-9.f, -9.f, -9.f, 0.5f, 2.0f, 1.5f};
    case kB:
      return {-9.f, -9.f, -9.f, 3.0f, -1.0f, 0.5f};
    default:
      return {-9.f, -9.f, -9.f, 0.f, 0.f, 0.f};
  }
}

struct BigramState : models::DecoderState {
  int64_t row_count;
  explicit BigramState(int64_t rows) : row_count(rows) {}
  void select_rows(const std::vector<int64_t>& rows) override { row_count = int64_t(rows.size()); }
  int64_t rows() const override { return row_count; }
};

class BigramModel : public models::Seq2SeqModel {
 public:
  BigramModel() : Seq2SeqModel("bigram", kWidth, 1) {}
  Tensor forward(const layers::RunContext&, const data::Batch&) const override {
    throw std::logic_error("decoding only");
  }
  models::HiddenStates forward_hidden(const layers::RunContext&, const data::Batch&) const override {
    throw std::logic_error("decoding only");
  }
  std::unique_ptr<models::DecoderState> start(const layers::RunContext&, const data::Batch& batch) const override {
    return std::make_unique<BigramState>(batch.size);
  }
  Tensor step(const layers::RunContext&, models::DecoderState& state,
              const std::vector<int32_t>& previous) const override {
    models::step_state<BigramState>(state, previous);
    std::vector<float> logits;
    for (const int32_t token : previous) {
      const std::vector<float> row = logits_after(token);
      logits.insert(logits.end(), row.begin(), row.end());
    }
    return Tensor::from_vector({int64_t(previous.size()), kWidth}, logits);
  }
};

// Two sentences of two source tokens: a limit of 1.5 * 2 + 4 = 7 output tokens each.
data::Batch two_sentences() {
  static const std::vector<int32_t> source = {7, kEos};
  return decode::source_batch({&source, &source});
}

decode::SearchOptions bigram_options(int beam) {
  decode::SearchOptions options;
  options.beam = options.nbest = beam;
  options.max_len_extra = 4;
  options.length_penalty = 0.f;
  return options;
}

struct Kind {
  std::string label;
  decode::SearchOptions options;
};

// Greedy, beam 3 (3-best) and sampling at a low temperature (which picks what greedy picks here).
// Beam search, length penalty 0, prefers short outputs: a b eos over a repeated a.
std::vector<Kind> kinds() {
  decode::SearchOptions sampling = bigram_options(1);
  sampling.sampling.enabled = true;
  sampling.sampling.temperature = 0.02f;
  sampling.sampling.seed = 11;
  return {{"greedy", bigram_options(1)}, {"beam", bigram_options(3)}, {"sampling", sampling}};
}

std::vector<std::vector<decode::Hypothesis>> run(const Kind& kind, const decode::OutputPrefixes& prefixes = {}) {
  return decode::search(BigramModel(), two_sentences(), kind.options, {1, 2}, prefixes);
}

// log_softmax(row)[token], in double.
double log_prob_of(const std::vector<float>& row, int32_t token) {
  double sum = 0;
  for (const float logit : row) sum += std::exp(double(logit));
  return double(row[size_t(token)]) - std::log(sum);
}

// What a hypothesis of the bigram model scores under repetition penalty `penalty`, by the
// formula: each step's logits with the tokens so far penalised (logit > 0: / P, else * P,
// each token once), log-softmaxed.
double expected_log_prob(const std::vector<int32_t>& tokens, float penalty) {
  double total = 0;
  int32_t previous = kBos;
  for (size_t t = 0; t < tokens.size(); ++t) {
    std::vector<float> row = logits_after(previous);
    for (int32_t used = 0; used < kWidth; ++used) {
      const auto end = tokens.begin() + std::ptrdiff_t(t);
      const bool seen = std::find(tokens.begin(), end, used) != end;
      if (seen) row[size_t(used)] = row[size_t(used)] > 0 ? row[size_t(used)] / penalty : row[size_t(used)] * penalty;
    }
    total += log_prob_of(row, tokens[t]);
    previous = tokens[t];
  }
  return total;
}

bool starts_with(const std::vector<int32_t>& tokens, const std::vector<int32_t>& prefix) {
  return tokens.size() >= prefix.size() && std::equal(prefix.begin(), prefix.end(), tokens.begin());
}

}  // namespace

TEST_CASE("the repetition penalty divides positive logits of used tokens and multiplies the others",
          "[decode][logits_processor]") {
  const decode::RepetitionPenaltyProcessor penalty(2.f);
  std::vector<float> row = {1.f, -1.f, 4.f, -3.f, 0.f, 6.f};
  std::vector<int32_t> forbidden;
  penalty.process(row.data(), kWidth, {2, 3, 2, 4, 99}, forbidden);  // 2 twice: penalised once; 99: no such id
  CHECK(row == std::vector<float>{1.f, -1.f, 2.f, -6.f, 0.f, 6.f});
  CHECK(forbidden.empty());
  // A penalty of 1 leaves a row as it is, bit for bit.
  std::vector<float> same = {0.3f, -0.7f, 1e-30f, -5.5f, 2.25f, -0.f};
  const std::vector<float> before = same;
  decode::RepetitionPenaltyProcessor(1.f).process(same.data(), kWidth, {0, 1, 2, 3, 4, 5}, forbidden);
  CHECK(std::memcmp(same.data(), before.data(), sizeof(float) * before.size()) == 0);
  CHECK_THROWS_WITH(decode::RepetitionPenaltyProcessor(0.f), Catch::Contains("repetition_penalty"));
  CHECK_THROWS_WITH(decode::RepetitionPenaltyProcessor(std::nanf("")), Catch::Contains("repetition_penalty"));
  decode::SearchOptions options;
  options.repetition_penalty = 1.f;
  CHECK(decode::LogitsProcessors(options).empty());  // 1 = off
  options.repetition_penalty = 1.2f;
  CHECK_FALSE(decode::LogitsProcessors(options).empty());
}

TEST_CASE("unpenalised a repeats to the limit - penalised a b eos with the scores of the penalised logits",
          "[decode][search][logits_processor]") {
  for (Kind kind : kinds()) {
    INFO(kind.label);
    for (const auto& nbest : run(kind)) {
      if (kind.options.beam == 1) CHECK(nbest.front().tokens == std::vector<int32_t>(7, kA));
      for (const decode::Hypothesis& hypothesis : nbest)
        CHECK(hypothesis.log_prob == Approx(expected_log_prob(hypothesis.tokens, 1.f)).epsilon(1e-5));
    }
    kind.options.repetition_penalty = 2.f;
    for (const auto& nbest : run(kind)) {
      CHECK(nbest.front().tokens == std::vector<int32_t>{kA, kB, kEos});
      for (const decode::Hypothesis& hypothesis : nbest) {  // beam search's others too
        INFO("hypothesis of " << hypothesis.tokens.size() << " tokens");
        CHECK(hypothesis.log_prob == Approx(expected_log_prob(hypothesis.tokens, 2.f)).epsilon(1e-5));
      }
    }
  }
  // By hand: log_softmax of (.., 0, 2, 1)[a] + of (.., .5, 2/2, 1.5)[b] + of (.., 3, -1*2, .5/2)[eos].
  const double by_hand = log_prob_of({-9, -9, -9, 0, 2, 1}, kA) + log_prob_of({-9, -9, -9, .5f, 1, 1.5f}, kB) +
                         log_prob_of({-9, -9, -9, 3, -2, .25f}, kEos);
  CHECK(expected_log_prob({kA, kB, kEos}, 2.f) == Approx(by_hand).epsilon(1e-12));
}

TEST_CASE("a repetition penalty of 1 gives the unpenalised search bit for bit", "[decode][search][logits_processor]") {
  for (Kind kind : kinds()) {
    INFO(kind.label);
    const auto plain = run(kind);
    kind.options.repetition_penalty = 1.f;
    const auto same = run(kind);
    REQUIRE(same.size() == plain.size());
    for (size_t s = 0; s < plain.size(); ++s) {
      REQUIRE(same[s].size() == plain[s].size());
      for (size_t i = 0; i < plain[s].size(); ++i) {
        CHECK(same[s][i].tokens == plain[s][i].tokens);
        CHECK(std::memcmp(&same[s][i].log_prob, &plain[s][i].log_prob, sizeof(float)) == 0);
        CHECK(std::memcmp(&same[s][i].score, &plain[s][i].score, sizeof(float)) == 0);
      }
    }
  }
}

TEST_CASE("forbidding keeps the log-probabilities of the whole row - as before the penalty existed",
          "[decode][search][logits_processor]") {
  // No unigram twice: greedy takes a, then b (a forbidden), then eos; each token scored by the
  // model's own log-softmax over the whole row, forbidden tokens included.
  for (Kind kind : kinds()) {
    INFO(kind.label);
    kind.options.no_repeat_ngram = 1;
    const auto found = run(kind);
    if (kind.options.beam == 1) CHECK(found.front().front().tokens == std::vector<int32_t>{kA, kB, kEos});
    for (const decode::Hypothesis& hypothesis : found.front())
      CHECK(hypothesis.log_prob == Approx(expected_log_prob(hypothesis.tokens, 1.f)).epsilon(1e-5));
  }
}

TEST_CASE("a prefix is forced - its log-probabilities count - then the model goes on", "[decode][search]") {
  for (Kind kind : kinds()) {
    INFO(kind.label);
    // b, then the model's eos; the forced b costs its log-probability after bos.
    const auto found = run(kind, {{kB}, {kB, kB, kA}});
    for (const decode::Hypothesis& hypothesis : found[0]) CHECK(starts_with(hypothesis.tokens, {kB}));
    CHECK(found[0].front().tokens == std::vector<int32_t>{kB, kEos});
    CHECK(found[0].front().log_prob ==
          Approx(log_prob_of(logits_after(kBos), kB) + log_prob_of(logits_after(kB), kEos)).epsilon(1e-5));
    // b b a forced (b after b is unlikely, a after b more so), then greedy repeats a to the limit.
    for (const decode::Hypothesis& hypothesis : found[1]) {
      CHECK(starts_with(hypothesis.tokens, {kB, kB, kA}));
      CHECK(hypothesis.log_prob == Approx(expected_log_prob(hypothesis.tokens, 1.f)).epsilon(1e-5));
    }
    if (kind.options.beam == 1) CHECK(found[1].front().tokens == std::vector<int32_t>{kB, kB, kA, kA, kA, kA, kA});
    // The run's prefix for every sentence; the repetition penalty counts the prefix's tokens.
    kind.options.prefix = {kA};
    kind.options.repetition_penalty = 2.f;
    for (const auto& nbest : run(kind)) {
      CHECK(nbest.front().tokens == std::vector<int32_t>{kA, kB, kEos});
      for (const decode::Hypothesis& hypothesis : nbest) {
        CHECK(starts_with(hypothesis.tokens, {kA}));
        CHECK(hypothesis.log_prob == Approx(expected_log_prob(hypothesis.tokens, 2.f)).epsilon(1e-5));
      }
    }
  }
}

TEST_CASE("beam search's n-best all start with the prefix and diverge after it", "[decode][search]") {
  Kind beam = kinds()[1];
  const auto found = run(beam, {{kA, kA}, {}});
  REQUIRE(found[0].size() == 3);
  for (const decode::Hypothesis& hypothesis : found[0]) CHECK(starts_with(hypothesis.tokens, {kA, kA}));
  CHECK(found[0][0].tokens != found[0][1].tokens);
  CHECK(found[0][1].tokens != found[0][2].tokens);
  CHECK_FALSE(starts_with(found[1].front().tokens, {kA, kA}));  // the other sentence is free
}

TEST_CASE("a prefix forbids nothing - and a forbidding processor does not block it", "[decode][search]") {
  // no_repeat_ngram 1 would forbid the second a, but forced tokens are no choice.
  for (Kind kind : kinds()) {
    INFO(kind.label);
    kind.options.no_repeat_ngram = 1;
    kind.options.prefix = {kA, kA};
    const decode::Hypothesis best = run(kind).front().front();
    CHECK(best.tokens == std::vector<int32_t>{kA, kA, kB, kEos});
    CHECK(std::isfinite(best.log_prob));
  }
}

TEST_CASE("a prefix longer than the length limit is cut at the limit", "[decode][search]") {
  for (Kind kind : kinds()) {
    INFO(kind.label);
    kind.options.prefix = {kB, kA, kB, kA, kB, kA, kB, kA, kB, kA};  // the limit is 7
    for (const auto& nbest : run(kind)) {
      REQUIRE(nbest.size() == 1);  // one forced beam all the way
      CHECK(nbest.front().tokens == std::vector<int32_t>(kind.options.prefix.begin(), kind.options.prefix.begin() + 7));
    }
  }
}

TEST_CASE("bad prefixes are refused with the reason", "[decode][search]") {
  Kind greedy = kinds()[0];
  CHECK_THROWS_WITH(run(greedy, {{kA}}), Catch::Contains("1 prefixes for 2 sentences"));
  CHECK_THROWS_WITH(run(greedy, {{kA}, {kEos}}), Catch::Contains("prefix token 3"));
  CHECK_THROWS_WITH(run(greedy, {{kA}, {int32_t(kWidth)}}), Catch::Contains("prefix token 6"));
}
