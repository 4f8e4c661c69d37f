// Bootstrap resampling (eval/bootstrap.h): sacreBLEU's interval and p-value on hand-made
// resample scores, and the resample indices.
#include <algorithm>
#include <numeric>
#include <random>
#include <vector>

#include <catch2/catch.hpp>

#include "core/check.h"
#include "eval/bootstrap.h"

using namespace attn::eval;

namespace {
struct Count {  // the smallest sufficient statistic: a sum
  long value = 0;
  Count& operator+=(const Count& other) {
    value += other.value;
    return *this;
  }
};
}  // namespace

TEST_CASE("estimate_ci is the mean and half the width between sorted scores at R/40 and R-R/40-1",
          "[eval][bootstrap]") {
  std::vector<double> scores(40);
  std::iota(scores.begin(), scores.end(), 1.0);  // 1..40
  std::shuffle(scores.begin(), scores.end(), std::mt19937(3));
  const BootstrapEstimate e = estimate_ci(scores);
  CHECK(e.mean == Approx(20.5));
  CHECK(e.lower == 2.0);   // [1]
  CHECK(e.upper == 39.0);  // [38]
  CHECK(e.ci == Approx(18.5));
  const BootstrapEstimate small = estimate_ci({5.0, 1.0, 3.0});  // R < 40: the extremes
  CHECK(small.lower == 1.0);
  CHECK(small.upper == 5.0);
  CHECK(small.ci == 2.0);
  CHECK_THROWS_AS(estimate_ci({}), attn::Error);
}

TEST_CASE("paired_bootstrap_p_value counts resamples whose centred difference exceeds the observed one",
          "[eval][bootstrap]") {
  // differences |sys - base| = {3, 1, 2, 0}, mean 1.5, centred {1.5, -0.5, 0.5, -1.5}
  const std::vector<double> system = {3, 1, 2, 0}, baseline = {0, 0, 0, 0};
  CHECK(paired_bootstrap_p_value(system, baseline, 0.4) == Approx(3.0 / 5));  // 1.5 and 0.5 exceed
  CHECK(paired_bootstrap_p_value(system, baseline, 1.0) == Approx(2.0 / 5));  // only 1.5
  CHECK(paired_bootstrap_p_value(system, baseline, 1.5) == Approx(1.0 / 5));  // none: > is strict
  // Identical systems: every centred difference is 0, never > 0, so p = 1 / (R + 1) as in sacreBLEU.
  const std::vector<double> same = {10, 12, 11};
  CHECK(paired_bootstrap_p_value(same, same, 0.0) == Approx(1.0 / 4));
  CHECK_THROWS_AS(paired_bootstrap_p_value({1, 2}, {1}, 0.0), attn::Error);
}

TEST_CASE("resamples are seeded - in range - and cover the corpus", "[eval][bootstrap]") {
  const Resamples a(50, 200, 7), b(50, 200, 7), c(50, 200, 8);
  std::vector<int> seen(50, 0);
  bool differs = false;
  for (int r = 0; r < 200; ++r)
    for (size_t i = 0; i < 50; ++i) {
      REQUIRE(a.index(r, i) < 50);
      CHECK(a.index(r, i) == b.index(r, i));
      differs = differs || a.index(r, i) != c.index(r, i);
      ++seen[a.index(r, i)];
    }
  CHECK(differs);
  // 10,000 draws of 50 indices: each expected 200 times; far outside [120, 280] would mean a bias.
  for (int count : seen) CHECK((count > 120 && count < 280));
  CHECK_THROWS_AS(Resamples(0, 10, 1), attn::Error);
  CHECK_THROWS_AS(Resamples(10, 0, 1), attn::Error);
}

TEST_CASE("resampled_scores sums the statistics of each resample's sentences", "[eval][bootstrap]") {
  const std::vector<Count> per_sentence = {{1}, {10}, {100}, {1000}};
  const Resamples resamples(4, 30, 5);
  const std::vector<double> scores =
      resampled_scores(per_sentence, resamples, [](const Count& total) { return double(total.value); });
  REQUIRE(scores.size() == 30);
  for (int r = 0; r < 30; ++r) {
    long expected = 0;
    for (size_t i = 0; i < 4; ++i) expected += per_sentence[resamples.index(r, i)].value;
    CHECK(scores[r] == double(expected));
  }
  CHECK_THROWS_AS(resampled_scores(std::vector<Count>(3), resamples, [](const Count&) { return 0.0; }), attn::Error);
}

TEST_CASE("bootstrap_signature puts bs and seed after nrefs as sacreBLEU does", "[eval][bootstrap]") {
  CHECK(bootstrap_signature("nrefs:1|case:mixed|version:x", 1000, 12345) ==
        "nrefs:1|bs:1000|seed:12345|case:mixed|version:x");
}
