#pragma once
// What corpus BLEU and corpus chrF share: the input checks sacreBLEU makes, and summing
// per-sentence statistics over the corpus (sentences in parallel, the sum in order so the
// result does not depend on the thread count).
#include <string>
#include <vector>

namespace attn::eval {

// Throws attn::Error when the line counts differ (naming both), when there is no sentence,
// or when a reference is the empty string (sacreBLEU refuses those; it names the line).
void check_corpus(const std::vector<std::string>& hyps, const std::vector<std::string>& refs);

// stats_of(hyps[i], refs[i]) for every sentence i, after check_corpus.
template <class Stats, class StatsOf>
std::vector<Stats> sentence_stats(const std::vector<std::string>& hyps, const std::vector<std::string>& refs,
                                  StatsOf stats_of) {
  check_corpus(hyps, refs);
  const long n = static_cast<long>(hyps.size());
  std::vector<Stats> per_sentence(hyps.size());
#pragma omp parallel for schedule(dynamic, 64)
  for (long i = 0; i < n; ++i) per_sentence[i] = stats_of(hyps[i], refs[i]);
  return per_sentence;
}

// The sum of statistics in sentence order; Stats needs `+=` and a zero default.
template <class Stats>
Stats sum_stats(const std::vector<Stats>& per_sentence) {
  Stats total{};
  for (const Stats& s : per_sentence) total += s;
  return total;
}

// sum over i of stats_of(hyps[i], refs[i]).
template <class Stats, class StatsOf>
Stats sum_sentence_stats(const std::vector<std::string>& hyps, const std::vector<std::string>& refs, StatsOf stats_of) {
  return sum_stats(sentence_stats<Stats>(hyps, refs, stats_of));
}

}  // namespace attn::eval
