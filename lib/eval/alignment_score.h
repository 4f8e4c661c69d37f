#pragma once
// Word alignments scored against gold links: precision, recall, F1 and the alignment error
// rate (Och and Ney 2003), summed over the corpus.
//
// A line holds one sentence's links, Pharaoh style: "0-0 1-2 2-1", each "i-j" a source word
// index and a target word index from 0, separated by spaces. Gold links may be marked sure
// ("i-j") or possible ("i?j", or "ipj" as in some gold sets); a line with tabs is read by its
// last field, so XL-WA's "source<TAB>target<TAB>links" files serve as they are. Every
// predicted link counts, whatever its mark. With A the predicted links, S the sure gold
// links and P the sure and possible ones (P ⊇ S), summed over sentences:
//   precision = |A ∩ P| / |A|,   recall = |A ∩ S| / |S|,   F1 = 2 precision recall / (precision + recall)
//   AER = 1 - (|A ∩ S| + |A ∩ P|) / (|A| + |S|)
// A ratio whose denominator is 0 is taken as 0 (precision, recall, F1) and AER as 0 when
// |A| + |S| = 0: no link, so no error.
#include <cstdint>
#include <set>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

namespace attn::eval {

using AlignmentLink = std::pair<int64_t, int64_t>;  // (source index, target index)

struct AlignmentLinks {
  std::set<AlignmentLink> sure;
  std::set<AlignmentLink> possible;  // the links marked possible only
};

// The links of one line. A token that is not "i-j", "i?j" or "ipj" with i, j >= 0 is an
// attn::Error quoting it.
AlignmentLinks parse_alignment_line(std::string_view line);

// The links of every line; a bad one is an attn::Error naming the file (by the name given, e.g.
// "'gold.tsv'") and the line: "'gold.tsv' line 2: bad alignment link '1-x'".
std::vector<AlignmentLinks> parse_alignment_lines(const std::vector<std::string>& lines, const std::string& name);

// |A|, |S|, |P|, |A ∩ S| and |A ∩ P|; they add over sentences.
struct AlignmentCounts {
  int64_t predicted = 0;
  int64_t sure = 0;
  int64_t possible = 0;  // sure and possible
  int64_t predicted_sure = 0;
  int64_t predicted_possible = 0;

  AlignmentCounts& operator+=(const AlignmentCounts& other);
};

AlignmentCounts count_alignment(const AlignmentLinks& predicted, const AlignmentLinks& gold);

struct AlignmentScore {
  AlignmentCounts counts;
  int64_t sentences = 0;
  double precision = 0, recall = 0, f1 = 0, aer = 0;  // 0..1

  // "AER = 0.2345 precision = 0.8012 recall = 0.7200 F1 = 0.7585 (sentences = 103 predicted =
  //  1200 sure = 1300 possible = 1300)"
  std::string format() const;
  // {"aer", "precision", "recall", "f1", "sentences", "predicted_links", "sure_links",
  //  "possible_links", "predicted_sure", "predicted_possible"}
  nlohmann::json to_json() const;
};

AlignmentScore alignment_score_from_counts(const AlignmentCounts& counts, int64_t sentences);

// Scores predicted lines against gold lines. A bad link is an attn::Error naming the file
// (by the name given) and the line; different line counts or no line at all name both.
AlignmentScore score_alignments(const std::vector<std::string>& gold, const std::vector<std::string>& predicted,
                                const std::string& gold_name, const std::string& predicted_name);

// The same over files; predicted_path empty reads standard input.
AlignmentScore score_alignment_files(const std::string& gold_path, const std::string& predicted_path);

}  // namespace attn::eval
