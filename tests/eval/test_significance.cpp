// --confidence and --paired-bs (eval/significance.h): properties that hold whatever the draws.
#include <string>
#include <vector>

#include <catch2/catch.hpp>

#include "core/check.h"
#include "eval/significance.h"

using namespace attn::eval;

namespace {
// A synthetic test set: sentence i is "wN ... " of 6 distinct words.
std::vector<std::string> references(int sentences) {
  std::vector<std::string> refs;
  for (int i = 0; i < sentences; ++i) {
    std::string line;
    for (int w = 0; w < 6; ++w) line += (w ? " w" : "w") + std::to_string(i * 6 + w);
    refs.push_back(line);
  }
  return refs;
}
// The references with their last word dropped in every `every`-th sentence.
std::vector<std::string> degraded(const std::vector<std::string>& refs, int every) {
  std::vector<std::string> out = refs;
  for (size_t i = 0; i < out.size(); i += every) out[i] = out[i].substr(0, out[i].rfind(' '));
  return out;
}
}  // namespace

TEST_CASE("paired bootstrap: an identical system gets sacreBLEU's p = 1/(R+1) and the baseline's estimate",
          "[eval][significance]") {
  const auto refs = references(60);
  const auto base = degraded(refs, 2);
  BootstrapOptions options;
  options.resamples = 100;
  const PairedBootstrapReport report = paired_bootstrap({{"base", base}, {"same", base}}, refs, options);
  REQUIRE(report.systems.size() == 2);
  CHECK_FALSE(report.systems[0].bleu.p_value);
  CHECK(*report.systems[1].bleu.p_value == Approx(1.0 / 101));
  CHECK(*report.systems[1].chrf.p_value == Approx(1.0 / 101));
  CHECK(report.systems[1].bleu.estimate.mean == report.systems[0].bleu.estimate.mean);
  CHECK(report.systems[1].chrf.estimate.ci == report.systems[0].chrf.estimate.ci);
}

TEST_CASE(
    "paired bootstrap: a strictly better system on a big corpus gets a small p - and the interval holds the score",
    "[eval][significance]") {
  const auto refs = references(400);
  BootstrapOptions options;
  options.resamples = 200;
  const PairedBootstrapReport report =
      paired_bootstrap({{"base", degraded(refs, 2)}, {"better", degraded(refs, 8)}}, refs, options);
  for (const SystemEstimate& system : report.systems)
    for (const MetricEstimate* metric : {&system.bleu, &system.chrf}) {
      CHECK(metric->estimate.lower <= metric->score);
      CHECK(metric->score <= metric->estimate.upper);
    }
  CHECK(report.systems[1].bleu.score > report.systems[0].bleu.score);
  CHECK(*report.systems[1].bleu.p_value == Approx(1.0 / 201));
  CHECK(*report.systems[1].chrf.p_value < 0.05);
  const std::string text = report.format();
  CHECK_THAT(text, Catch::Contains("Baseline: base") && Catch::Contains("p = 0.0050*"));
  CHECK_THAT(text, Catch::Contains("nrefs:1|bs:200|seed:12345|"));
  CHECK(report.to_json().at("systems").at(1).at("bleu_p_value").get<double>() == Approx(1.0 / 201));
}

TEST_CASE("bootstrap results repeat with a seed - change with another - and --confidence uses the same resamples",
          "[eval][significance]") {
  const auto refs = references(80);
  const auto hyps = degraded(refs, 3);
  BootstrapOptions options;
  options.resamples = 50;
  const ConfidenceReport a = bootstrap_confidence(hyps, refs, options);
  const ConfidenceReport b = bootstrap_confidence(hyps, refs, options);
  CHECK(a.bleu.estimate.mean == b.bleu.estimate.mean);
  CHECK(a.chrf.estimate.ci == b.chrf.estimate.ci);
  CHECK(a.bleu.score == corpus_bleu(hyps, refs).score);
  const PairedBootstrapReport paired = paired_bootstrap({{"h", hyps}, {"r", refs}}, refs, options);
  CHECK(paired.systems[0].bleu.estimate.mean == a.bleu.estimate.mean);
  options.seed = 99;
  CHECK(bootstrap_confidence(hyps, refs, options).bleu.estimate.mean != a.bleu.estimate.mean);
  CHECK_THAT(a.format(), Catch::Contains("(μ = ") && Catch::Contains("nrefs:1|bs:50|seed:12345|"));
}

TEST_CASE("the bootstrap refuses one system - mismatched lines - no resamples", "[eval][significance]") {
  const auto refs = references(5);
  BootstrapOptions options;
  CHECK_THROWS_WITH(paired_bootstrap({{"a", refs}}, refs, options), Catch::Contains("baseline"));
  CHECK_THROWS_AS(paired_bootstrap({{"a", refs}, {"b", degraded(references(4), 1)}}, refs, options), attn::Error);
  options.resamples = 0;
  CHECK_THROWS_AS(bootstrap_confidence(refs, refs, options), attn::Error);
}
