#pragma once
// Corpus chrF2 (Popović 2015) with sacreBLEU 2.x defaults: character n-grams of orders 1..6
// over Unicode code points with all whitespace removed, no word n-grams, beta = 2, mixed
// case, and sacreBLEU's default "effective order" averaging (eps_smoothing = False, which
// its signature shows as eff:yes). With a word order w > 0 it is chrF++ (Popović 2017), as
// sacreBLEU's --chrf-word-order w: word n-grams of orders 1..w are further "orders" of the
// same average. Words are Python's str.split() tokens, each with one punctuation character
// (string.punctuation) split off its end or else its start, unless it is one character long.
//
// Per sentence and order n: hyp_n = number of hypothesis n-grams (counted as 0 when the
// reference has no n-gram of that order), ref_n = number of reference n-grams,
// match_n = sum over n-grams g of min(count_hyp(g), count_ref(g)). Summed over the corpus:
//   orders used: character orders, then word orders, with hyp_n > 0 and ref_n > 0 (m of them)
//   P = (1/m) sum match_n / hyp_n,   R = (1/m) sum match_n / ref_n
//   chrF = 100 * (1 + beta^2) P R / (beta^2 P + R),   0 when m == 0 or P + R == 0.
#include <array>
#include <cstdint>
#include <string>
#include <vector>

namespace attn::eval {

constexpr int kChrfCharOrder = 6;
constexpr int kChrfMaxWordOrder = 4;
constexpr int kChrfMaxOrders = kChrfCharOrder + kChrfMaxWordOrder;
constexpr int kChrfBeta = 2;

// Sufficient statistics of chrF; they add over sentences. Character order n at [n-1], word
// order n at [kChrfCharOrder + n-1]; orders beyond the word order asked for stay 0.
struct ChrfStats {
  std::array<int64_t, kChrfMaxOrders> hyp{};
  std::array<int64_t, kChrfMaxOrders> ref{};
  std::array<int64_t, kChrfMaxOrders> match{};

  ChrfStats& operator+=(const ChrfStats& other);
};

struct ChrfScore {
  double score = 0;      // 0..100
  double precision = 0;  // P above, 0..1
  double recall = 0;     // R above, 0..1
  int word_order = 0;

  // "chrF2", or "chrF2++" with word order 2 (sacreBLEU's name: one '+' per word order)
  std::string name() const;
  // "nrefs:1|case:mixed|eff:yes|nc:6|nw:0|space:no|version:attn-sacrebleu2-compat"
  std::string signature() const;
  // "chrF2 = 58.12"
  std::string format() const;
};

// An attn::Error unless 0 <= word_order <= kChrfMaxWordOrder; the functions below check it too,
// but a caller computing sentence statistics in a parallel loop must check before it.
void check_chrf_word_order(int word_order);

// Statistics of one sentence pair (raw text).
ChrfStats chrf_sentence_stats(const std::string& hyp, const std::string& ref, int word_order = 0);

// The score from (corpus-summed) statistics of that word order.
ChrfScore chrf_from_stats(const ChrfStats& stats, int word_order = 0);

// Corpus chrF2 (chrF++ with word_order 2) with one reference per hypothesis; the same input
// errors as corpus_bleu.
ChrfScore corpus_chrf(const std::vector<std::string>& hyps, const std::vector<std::string>& refs, int word_order = 0);

}  // namespace attn::eval
