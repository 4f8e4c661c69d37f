#include "eval/bootstrap.h"

#include <algorithm>
#include <cmath>

namespace attn::eval {

Resamples::Resamples(size_t sentences, int count, uint64_t seed) : sentences_(sentences), count_(count), seed_(seed) {
  ATTN_CHECK(sentences > 0, "nothing to resample: the test set is empty");
  ATTN_CHECK(count > 0, "the number of bootstrap resamples must be at least 1; got ", count);
}

BootstrapEstimate estimate_ci(std::vector<double> scores) {
  ATTN_CHECK(!scores.empty(), "no resample scores to estimate from");
  std::sort(scores.begin(), scores.end());
  const size_t lower_index = scores.size() / 40;
  const size_t upper_index = scores.size() - lower_index - 1;
  BootstrapEstimate estimate;
  double sum = 0;
  for (double s : scores) sum += s;
  estimate.mean = sum / double(scores.size());
  estimate.lower = scores[lower_index];
  estimate.upper = scores[upper_index];
  estimate.ci = 0.5 * (estimate.upper - estimate.lower);
  return estimate;
}

double paired_bootstrap_p_value(const std::vector<double>& system, const std::vector<double>& baseline,
                                double observed_difference) {
  ATTN_CHECK(!system.empty() && system.size() == baseline.size(),
             "paired resample scores differ in number: ", system.size(), " and ", baseline.size());
  std::vector<double> differences(system.size());
  double sum = 0;
  for (size_t r = 0; r < system.size(); ++r) {
    differences[r] = std::abs(system[r] - baseline[r]);
    sum += differences[r];
  }
  const double mean = sum / double(differences.size());
  size_t exceeding = 0;
  for (double d : differences) exceeding += (d - mean > observed_difference) ? 1 : 0;
  return double(exceeding + 1) / double(differences.size() + 1);
}

std::string bootstrap_signature(const std::string& signature, int resamples, uint64_t seed) {
  const std::string fields = "bs:" + std::to_string(resamples) + "|seed:" + std::to_string(seed) + "|";
  const size_t after_nrefs = signature.find('|') + 1;  // 0 when there is no '|': fields go first
  return signature.substr(0, after_nrefs) + fields + signature.substr(after_nrefs);
}

}  // namespace attn::eval
