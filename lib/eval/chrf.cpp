#include "eval/chrf.h"

#include <algorithm>
#include <cstdio>
#include <string_view>
#include <unordered_map>

#include "eval/corpus_stats.h"
#include "eval/signature.h"
#include "eval/unicode_text.h"

namespace attn::eval {

namespace {

// Counts of every character n-gram of one order; the keys view into `chars`.
std::unordered_map<std::u32string_view, int64_t> count_char_ngrams(const std::u32string& chars, int n) {
  std::unordered_map<std::u32string_view, int64_t> counts;
  const std::u32string_view view(chars);
  for (size_t i = 0; i + n <= chars.size(); ++i) ++counts[view.substr(i, n)];
  return counts;
}

}  // namespace

ChrfStats& ChrfStats::operator+=(const ChrfStats& other) {
  for (int n = 0; n < kChrfCharOrder; ++n) {
    hyp[n] += other.hyp[n];
    ref[n] += other.ref[n];
    match[n] += other.match[n];
  }
  return *this;
}

ChrfStats chrf_sentence_stats(const std::string& hyp, const std::string& ref) {
  const std::u32string hyp_chars = code_points_without_whitespace(hyp);
  const std::u32string ref_chars = code_points_without_whitespace(ref);
  ChrfStats stats;
  for (int n = 1; n <= kChrfCharOrder; ++n) {
    const auto ref_counts = count_char_ngrams(ref_chars, n);
    int64_t hyp_count = 0, ref_count = 0, match_count = 0;
    for (const auto& [ngram, count] : count_char_ngrams(hyp_chars, n)) {
      hyp_count += count;
      const auto hit = ref_counts.find(ngram);
      if (hit != ref_counts.end()) match_count += std::min(count, hit->second);
    }
    for (const auto& entry : ref_counts) ref_count += entry.second;
    // sacreBLEU does not count hypothesis n-grams of an order the reference lacks.
    stats.hyp[n - 1] = ref_counts.empty() ? 0 : hyp_count;
    stats.ref[n - 1] = ref_count;
    stats.match[n - 1] = match_count;
  }
  return stats;
}

ChrfScore chrf_from_stats(const ChrfStats& stats) {
  ChrfScore result;
  int effective_order = 0;
  double precision_sum = 0.0, recall_sum = 0.0;
  for (int n = 0; n < kChrfCharOrder; ++n) {
    if (stats.hyp[n] > 0 && stats.ref[n] > 0) {
      precision_sum += double(stats.match[n]) / double(stats.hyp[n]);
      recall_sum += double(stats.match[n]) / double(stats.ref[n]);
      ++effective_order;
    }
  }
  if (effective_order == 0) return result;
  result.precision = precision_sum / effective_order;
  result.recall = recall_sum / effective_order;
  if (result.precision + result.recall == 0.0) return result;
  const double factor = double(kChrfBeta) * kChrfBeta;
  const double f_beta = (1 + factor) * result.precision * result.recall / (factor * result.precision + result.recall);
  result.score = 100.0 * f_beta;
  return result;
}

ChrfScore corpus_chrf(const std::vector<std::string>& hyps, const std::vector<std::string>& refs) {
  return chrf_from_stats(sum_sentence_stats<ChrfStats>(hyps, refs, chrf_sentence_stats));
}

std::string ChrfScore::signature() const {
  return std::string("nrefs:1|case:mixed|eff:yes|nc:6|nw:0|space:no|version:") + kSignatureVersion;
}

std::string ChrfScore::format() const {
  char buffer[64];
  std::snprintf(buffer, sizeof buffer, "chrF%d = %.2f", kChrfBeta, score);
  return buffer;
}

}  // namespace attn::eval
