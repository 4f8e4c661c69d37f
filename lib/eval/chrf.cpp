#include "eval/chrf.h"

#include <algorithm>
#include <cstdio>
#include <string_view>
#include <unordered_map>

#include "core/check.h"
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

// Counts of every word n-gram of one order; key = the words joined by ' ' (words hold no spaces).
std::unordered_map<std::string, int64_t> count_word_ngrams(const std::vector<std::string>& words, int n) {
  std::unordered_map<std::string, int64_t> counts;
  for (size_t i = 0; i + n <= words.size(); ++i) {
    std::string key = words[i];
    for (int k = 1; k < n; ++k) key.append(" ").append(words[i + k]);
    ++counts[key];
  }
  return counts;
}

// Python's string.punctuation: the ASCII punctuation sacreBLEU splits off chrF++ words.
bool is_ascii_punctuation(char c) {
  return (c >= '!' && c <= '/') || (c >= ':' && c <= '@') || (c >= '[' && c <= '`') || (c >= '{' && c <= '~');
}

// sacreBLEU's chrF++ words: str.split(), then one punctuation character off the end of a word
// (or else off its start), words of one character kept whole. Bytes serve for code points
// here: the punctuation is ASCII, and no byte of a multi-byte character is ASCII, so a
// multi-byte word never loses a byte and a one-code-point word is never split.
std::vector<std::string> chrf_words(const std::string& text) {
  std::vector<std::string> words;
  for (std::string& word : split_whitespace(text)) {
    if (word.size() > 1 && is_ascii_punctuation(word.back())) {
      const char last = word.back();
      word.pop_back();
      words.push_back(std::move(word));
      words.emplace_back(1, last);
    } else if (word.size() > 1 && is_ascii_punctuation(word.front())) {
      words.emplace_back(1, word.front());
      words.push_back(word.substr(1));
    } else {
      words.push_back(std::move(word));
    }
  }
  return words;
}

// One order's (hyp, ref, match) from its n-gram counts into stats at `slot`.
template <class Counts>
void add_order_stats(const Counts& hyp_counts, const Counts& ref_counts, int slot, ChrfStats& stats) {
  int64_t hyp_count = 0, ref_count = 0, match_count = 0;
  for (const auto& [ngram, count] : hyp_counts) {
    hyp_count += count;
    const auto hit = ref_counts.find(ngram);
    if (hit != ref_counts.end()) match_count += std::min(count, hit->second);
  }
  for (const auto& entry : ref_counts) ref_count += entry.second;
  // sacreBLEU does not count hypothesis n-grams of an order the reference lacks.
  stats.hyp[slot] = ref_counts.empty() ? 0 : hyp_count;
  stats.ref[slot] = ref_count;
  stats.match[slot] = match_count;
}

}  // namespace

void check_chrf_word_order(int word_order) {
  ATTN_CHECK(word_order >= 0 && word_order <= kChrfMaxWordOrder, "the chrF word order must be in [0, ",
             kChrfMaxWordOrder, "]; got ", word_order);
}

ChrfStats& ChrfStats::operator+=(const ChrfStats& other) {
  for (int n = 0; n < kChrfMaxOrders; ++n) {
    hyp[n] += other.hyp[n];
    ref[n] += other.ref[n];
    match[n] += other.match[n];
  }
  return *this;
}

ChrfStats chrf_sentence_stats(const std::string& hyp, const std::string& ref, int word_order) {
  check_chrf_word_order(word_order);
  const std::u32string hyp_chars = code_points_without_whitespace(hyp);
  const std::u32string ref_chars = code_points_without_whitespace(ref);
  ChrfStats stats;
  for (int n = 1; n <= kChrfCharOrder; ++n)
    add_order_stats(count_char_ngrams(hyp_chars, n), count_char_ngrams(ref_chars, n), n - 1, stats);
  if (word_order == 0) return stats;
  const std::vector<std::string> hyp_words = chrf_words(hyp), ref_words = chrf_words(ref);
  for (int n = 1; n <= word_order; ++n)
    add_order_stats(count_word_ngrams(hyp_words, n), count_word_ngrams(ref_words, n), kChrfCharOrder + n - 1, stats);
  return stats;
}

// Orders beyond the word order are all 0 and so never among the orders used.
ChrfScore chrf_from_stats(const ChrfStats& stats, int word_order) {
  check_chrf_word_order(word_order);
  ChrfScore result;
  result.word_order = word_order;
  int effective_order = 0;
  double precision_sum = 0.0, recall_sum = 0.0;
  for (int n = 0; n < kChrfCharOrder + word_order; ++n) {
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

ChrfScore corpus_chrf(const std::vector<std::string>& hyps, const std::vector<std::string>& refs, int word_order) {
  check_chrf_word_order(word_order);
  const auto stats_of = [word_order](const std::string& hyp, const std::string& ref) {
    return chrf_sentence_stats(hyp, ref, word_order);
  };
  return chrf_from_stats(sum_sentence_stats<ChrfStats>(hyps, refs, stats_of), word_order);
}

std::string ChrfScore::name() const { return "chrF" + std::to_string(kChrfBeta) + std::string(word_order, '+'); }

std::string ChrfScore::signature() const {
  return "nrefs:1|case:mixed|eff:yes|nc:" + std::to_string(kChrfCharOrder) + "|nw:" + std::to_string(word_order) +
         "|space:no|version:" + kSignatureVersion;
}

std::string ChrfScore::format() const {
  char buffer[64];
  std::snprintf(buffer, sizeof buffer, " = %.2f", score);
  return name() + buffer;
}

}  // namespace attn::eval
