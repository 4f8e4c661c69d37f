#include "eval/bleu.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <string_view>
#include <unordered_map>

#include "eval/corpus_stats.h"
#include "eval/signature.h"
#include "eval/tokenizer_13a.h"
#include "eval/unicode_text.h"

namespace attn::eval {

namespace {

// sacreBLEU's floored log: log(0) is taken as -9999999999, which drives BLEU to exactly 0.
constexpr double kLogOfZero = -9999999999.0;

double floored_log(double x) { return x == 0.0 ? kLogOfZero : std::log(x); }

// The 13a tokens of a line, after Python's rstrip() as sacreBLEU does before tokenizing.
// tokenize_13a joins with single spaces, so splitting on ' ' recovers its tokens.
std::vector<std::string> bleu_tokens(const std::string& line) {
  const std::string tokenized = tokenize_13a(rstrip_whitespace(line));
  std::vector<std::string> tokens;
  size_t begin = 0;
  while (begin < tokenized.size()) {
    size_t end = tokenized.find(' ', begin);
    if (end == std::string::npos) end = tokenized.size();
    tokens.push_back(tokenized.substr(begin, end - begin));
    begin = end + 1;
  }
  return tokens;
}

// Counts of every n-gram of one order; key = the tokens joined by ' ' (tokens hold no spaces).
std::unordered_map<std::string, int64_t> count_ngrams(const std::vector<std::string>& tokens, int n) {
  std::unordered_map<std::string, int64_t> counts;
  for (size_t i = 0; i + n <= tokens.size(); ++i) {
    std::string key = tokens[i];
    for (int k = 1; k < n; ++k) key.append(" ").append(tokens[i + k]);
    ++counts[key];
  }
  return counts;
}

std::string format_fixed(double value, int decimals) {
  char buffer[64];
  std::snprintf(buffer, sizeof buffer, "%.*f", decimals, value);
  return buffer;
}

}  // namespace

BleuStats& BleuStats::operator+=(const BleuStats& other) {
  hyp_len += other.hyp_len;
  ref_len += other.ref_len;
  for (int n = 0; n < kBleuMaxOrder; ++n) {
    matches[n] += other.matches[n];
    totals[n] += other.totals[n];
  }
  return *this;
}

BleuStats bleu_sentence_stats(const std::string& hyp, const std::string& ref) {
  const std::vector<std::string> hyp_tokens = bleu_tokens(hyp);
  const std::vector<std::string> ref_tokens = bleu_tokens(ref);
  BleuStats stats;
  stats.hyp_len = static_cast<int64_t>(hyp_tokens.size());
  stats.ref_len = static_cast<int64_t>(ref_tokens.size());
  for (int n = 1; n <= kBleuMaxOrder; ++n) {
    const auto ref_counts = count_ngrams(ref_tokens, n);
    for (const auto& [ngram, count] : count_ngrams(hyp_tokens, n)) {
      stats.totals[n - 1] += count;
      const auto hit = ref_counts.find(ngram);
      if (hit != ref_counts.end()) stats.matches[n - 1] += std::min(count, hit->second);
    }
  }
  return stats;
}

BleuScore bleu_from_stats(const BleuStats& stats) {
  BleuScore result;
  result.hyp_len = stats.hyp_len;
  result.ref_len = stats.ref_len;
  result.ratio = stats.ref_len > 0 ? double(stats.hyp_len) / double(stats.ref_len) : 0.0;
  result.bp = 1.0;
  if (stats.hyp_len < stats.ref_len)
    result.bp = stats.hyp_len > 0 ? std::exp(1.0 - double(stats.ref_len) / double(stats.hyp_len)) : 0.0;

  bool any_match = false;
  for (int64_t m : stats.matches) any_match = any_match || m > 0;
  if (!any_match) return result;  // score 0, precisions 0 (sacreBLEU's early exit)

  double smooth = 1.0;  // 2^k after k zero-match orders
  for (int n = 0; n < kBleuMaxOrder; ++n) {
    if (stats.totals[n] == 0) break;  // this and higher orders keep precision 0
    if (stats.matches[n] == 0) {
      smooth *= 2.0;
      result.precisions[n] = 100.0 / (smooth * double(stats.totals[n]));
    } else {
      result.precisions[n] = 100.0 * double(stats.matches[n]) / double(stats.totals[n]);
    }
  }
  double log_sum = 0.0;
  for (double p : result.precisions) log_sum += floored_log(p);
  result.score = result.bp * std::exp(log_sum / kBleuMaxOrder);
  return result;
}

BleuScore corpus_bleu(const std::vector<std::string>& hyps, const std::vector<std::string>& refs) {
  return bleu_from_stats(sum_sentence_stats<BleuStats>(hyps, refs, bleu_sentence_stats));
}

std::string BleuScore::signature() const {
  return std::string("nrefs:1|case:mixed|eff:no|tok:13a|smooth:exp|version:") + kSignatureVersion;
}

std::string BleuScore::format() const { return "BLEU = " + format_fixed(score, 2) + " " + format_details(); }

std::string BleuScore::format_details() const {
  std::string out;
  for (int n = 0; n < kBleuMaxOrder; ++n) out += (n ? "/" : "") + format_fixed(precisions[n], 1);
  out += " (BP = " + format_fixed(bp, 3) + " ratio = " + format_fixed(ratio, 3) +
         " hyp_len = " + std::to_string(hyp_len) + " ref_len = " + std::to_string(ref_len) + ")";
  return out;
}

}  // namespace attn::eval
