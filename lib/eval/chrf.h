#pragma once
// Corpus chrF2 (Popović 2015) with sacreBLEU 2.x defaults: character n-grams of orders 1..6
// over Unicode code points with all whitespace removed, no word n-grams, beta = 2, mixed
// case, and sacreBLEU's default "effective order" averaging (eps_smoothing = False, which
// its signature shows as eff:yes).
//
// Per sentence and order n: hyp_n = number of hypothesis n-grams (counted as 0 when the
// reference has no n-gram of that order), ref_n = number of reference n-grams,
// match_n = sum over n-grams g of min(count_hyp(g), count_ref(g)). Summed over the corpus:
//   orders used: those with hyp_n > 0 and ref_n > 0 (say m of them)
//   P = (1/m) sum match_n / hyp_n,   R = (1/m) sum match_n / ref_n
//   chrF = 100 * (1 + beta^2) P R / (beta^2 P + R),   0 when m == 0 or P + R == 0.
#include <array>
#include <cstdint>
#include <string>
#include <vector>

namespace attn::eval {

constexpr int kChrfCharOrder = 6;
constexpr int kChrfBeta = 2;

// Sufficient statistics of chrF; they add over sentences.
struct ChrfStats {
  std::array<int64_t, kChrfCharOrder> hyp{};  // order n at [n-1]
  std::array<int64_t, kChrfCharOrder> ref{};
  std::array<int64_t, kChrfCharOrder> match{};

  ChrfStats& operator+=(const ChrfStats& other);
};

struct ChrfScore {
  double score = 0;      // 0..100
  double precision = 0;  // P above, 0..1
  double recall = 0;     // R above, 0..1

  // "nrefs:1|case:mixed|eff:yes|nc:6|nw:0|space:no|version:attn-sacrebleu2-compat"
  std::string signature() const;
  // "chrF2 = 58.12"
  std::string format() const;
};

// Statistics of one sentence pair (raw text).
ChrfStats chrf_sentence_stats(const std::string& hyp, const std::string& ref);

// The score from (corpus-summed) statistics.
ChrfScore chrf_from_stats(const ChrfStats& stats);

// Corpus chrF2 with one reference per hypothesis; the same input errors as corpus_bleu.
ChrfScore corpus_chrf(const std::vector<std::string>& hyps, const std::vector<std::string>& refs);

}  // namespace attn::eval
