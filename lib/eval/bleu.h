#pragma once
// Corpus BLEU (Papineni et al. 2002) with sacreBLEU 2.x defaults: 13a tokenization, mixed
// case, one reference per sentence, n-gram orders 1..4, "exp" smoothing, no effective order.
//
// Per sentence: hyp/ref tokens from tokenize_13a(rstrip(line)); for each order n the
// hypothesis n-gram count total_n and the clipped match count
//   matches_n = sum over hyp n-grams g of min(count_hyp(g), count_ref(g)).
// The statistics are summed over the corpus, then (percentages, as sacreBLEU reports them)
//   p_n = 100 * matches_n / total_n
//   p_n = 100 / (2^k * total_n)   when matches_n == 0: "exp" smoothing (mteval-v13a's NIST
//                                  smoothing), k counting the zero-match orders so far
//   BP  = 1 if hyp_len >= ref_len, else exp(1 - ref_len / hyp_len) (0 when hyp_len == 0)
//   BLEU = BP * exp(1/4 * sum_n log p_n)
// and BLEU is exactly 0 when no n-gram of any order matches. An order with no hypothesis
// n-grams (total_n == 0) contributes log 0, i.e. a score of 0. With one reference, the
// "closest reference length" is simply that reference's length.
#include <array>
#include <cstdint>
#include <string>
#include <vector>

namespace attn::eval {

constexpr int kBleuMaxOrder = 4;

// Sufficient statistics of BLEU; they add over sentences.
struct BleuStats {
  int64_t hyp_len = 0;
  int64_t ref_len = 0;
  std::array<int64_t, kBleuMaxOrder> matches{};  // clipped n-gram matches, order n at [n-1]
  std::array<int64_t, kBleuMaxOrder> totals{};   // hypothesis n-grams, order n at [n-1]

  BleuStats& operator+=(const BleuStats& other);
};

struct BleuScore {
  double score = 0;                                // 0..100
  std::array<double, kBleuMaxOrder> precisions{};  // p_1..p_4 in percent, after smoothing
  double bp = 0;                                   // brevity penalty
  double ratio = 0;                                // hyp_len / ref_len (0 when ref_len == 0)
  int64_t hyp_len = 0;
  int64_t ref_len = 0;

  // "nrefs:1|case:mixed|eff:no|tok:13a|smooth:exp|version:attn-sacrebleu2-compat"
  std::string signature() const;
  // "BLEU = 35.21 62.3/40.1/28.5/20.2 (BP = 0.980 ratio = 0.980 hyp_len = 1234 ref_len = 1259)"
  std::string format() const;
  // The part after the score: "62.3/40.1/28.5/20.2 (BP = 0.980 ... ref_len = 1259)"
  std::string format_details() const;
};

// Statistics of one sentence pair (raw, untokenized text).
BleuStats bleu_sentence_stats(const std::string& hyp, const std::string& ref);

// The score from (corpus-summed) statistics.
BleuScore bleu_from_stats(const BleuStats& stats);

// Corpus BLEU with one reference per hypothesis. Throws attn::Error when the counts differ
// (naming both), when the corpus is empty, or when a reference line is empty (sacreBLEU
// rejects empty references too).
BleuScore corpus_bleu(const std::vector<std::string>& hyps, const std::vector<std::string>& refs);

}  // namespace attn::eval
