#pragma once
// Bootstrap resampling of a test set (Koehn 2004), with sacreBLEU 2.x's definitions
// (sacrebleu/significance.py).
//
// A resample is N sentence indices drawn uniformly with replacement from the N sentences;
// its score is the metric of the summed per-sentence sufficient statistics of those
// sentences (so a resample is a sum, never a new tokenisation). Every system is resampled
// with the same indices, which is what makes the test paired.
//
// The estimate of R resample scores is sacreBLEU's estimate_ci: their mean, and half the
// width between the sorted scores at [R / 40] and [R - R / 40 - 1] (a 95% interval), shown
// as "mean ± ci".
//
// The paired bootstrap p-value of a system against the baseline, as sacreBLEU computes it:
// with d_r = |score_sys(r) - score_base(r)| for each resample and the observed
// D = |score_sys - score_base| on the whole test set,
//   c = #{r : d_r - mean(d) > D},   p = (c + 1) / (R + 1).
// So a system identical to the baseline gets p = 1 / (R + 1): every d_r - mean(d) is 0, and
// 0 > 0 never holds (sacreBLEU's rule, taken from multeval, that a difference of zero is not
// attributed to chance).
//
// The indices come from attn's counter-based Rng, not from numpy: the same --seed gives the
// same resamples on every machine and thread count, but not numpy's resamples, so means,
// intervals and p-values agree with sacreBLEU's statistically, not digit for digit.
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "core/check.h"
#include "core/rng.h"

namespace attn::eval {

constexpr int kDefaultResamples = 1000;
constexpr uint64_t kDefaultBootstrapSeed = 12345;  // sacreBLEU's default SACREBLEU_SEED

// The sentence indices of `count` resamples of a corpus of `sentences`. Index i of resample r
// is value r * sentences + i of Rng(seed), reduced modulo `sentences`: computed, not stored,
// and independent of the order in which resamples are taken.
class Resamples {
 public:
  Resamples(size_t sentences, int count, uint64_t seed);

  size_t sentences() const { return sentences_; }
  int count() const { return count_; }
  uint64_t seed() const { return seed_; }
  size_t index(int resample, size_t i) const {
    return static_cast<size_t>(mix64(seed_, uint64_t(resample) * sentences_ + i) % sentences_);
  }

 private:
  size_t sentences_;
  int count_;
  uint64_t seed_;
};

// score_of(sum of per_sentence[index(r, i)] over i) for every resample r, in resample order
// (resamples in parallel, each sum in index order, so the thread count changes nothing).
template <class Stats, class ScoreOf>
std::vector<double> resampled_scores(const std::vector<Stats>& per_sentence, const Resamples& resamples,
                                     ScoreOf score_of) {
  ATTN_CHECK(per_sentence.size() == resamples.sentences(), "resampling ", per_sentence.size(),
             " sentences with indices drawn for ", resamples.sentences());
  std::vector<double> scores(resamples.count());
#pragma omp parallel for schedule(dynamic, 8)
  for (int r = 0; r < resamples.count(); ++r) {
    Stats total{};
    for (size_t i = 0; i < resamples.sentences(); ++i) total += per_sentence[resamples.index(r, i)];
    scores[r] = score_of(total);
  }
  return scores;
}

// sacreBLEU's estimate_ci of resample scores (above).
struct BootstrapEstimate {
  double mean = 0;
  double ci = 0;     // half the width of the 95% interval
  double lower = 0;  // the interval's ends: sorted scores at [R / 40] and [R - R / 40 - 1]
  double upper = 0;
};
BootstrapEstimate estimate_ci(std::vector<double> scores);

// The paired bootstrap p-value (above) of `system` against `baseline`, resample scores of
// the same resamples; observed_difference is |score_sys - score_base| on the whole test set.
double paired_bootstrap_p_value(const std::vector<double>& system, const std::vector<double>& baseline,
                                double observed_difference);

// A sacreBLEU signature with the bootstrap's fields after nrefs, as sacreBLEU writes them:
// "nrefs:1|bs:1000|seed:12345|case:mixed|...".
std::string bootstrap_signature(const std::string& signature, int resamples, uint64_t seed);

}  // namespace attn::eval
