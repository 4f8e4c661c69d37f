#include "eval/alignment_score.h"

#include <cstdio>
#include <iostream>

#include "core/check.h"
#include "eval/score_report.h"

namespace attn::eval {

namespace {

// A word index: one or more ASCII digits, within int64 for any real sentence.
bool parse_index(std::string_view text, int64_t& value) {
  if (text.empty() || text.size() > 9) return false;
  value = 0;
  for (char c : text) {
    if (c < '0' || c > '9') return false;
    value = value * 10 + (c - '0');
  }
  return true;
}

std::string_view last_tab_field(std::string_view line) {
  const size_t tab = line.rfind('\t');
  return tab == std::string_view::npos ? line : line.substr(tab + 1);
}

std::vector<std::string_view> split_spaces(std::string_view text) {
  std::vector<std::string_view> tokens;
  size_t begin = 0;
  while (begin < text.size()) {
    if (text[begin] == ' ' || text[begin] == '\r') {
      ++begin;
      continue;
    }
    size_t end = begin;
    while (end < text.size() && text[end] != ' ' && text[end] != '\r') ++end;
    tokens.push_back(text.substr(begin, end - begin));
    begin = end;
  }
  return tokens;
}

size_t intersection_size(const std::set<AlignmentLink>& a, const std::set<AlignmentLink>& b) {
  size_t count = 0;
  for (const AlignmentLink& link : a) count += b.count(link);
  return count;
}

double ratio(int64_t numerator, int64_t denominator) {
  return denominator > 0 ? double(numerator) / double(denominator) : 0.0;
}

std::string fixed4(double value) {
  char buffer[32];
  std::snprintf(buffer, sizeof buffer, "%.4f", value);
  return buffer;
}

}  // namespace

AlignmentLinks parse_alignment_line(std::string_view line) {
  AlignmentLinks links;
  for (std::string_view token : split_spaces(last_tab_field(line))) {
    const size_t mark = token.find_first_of("-?p");
    AlignmentLink link;
    const bool ok = mark != std::string_view::npos && parse_index(token.substr(0, mark), link.first) &&
                    parse_index(token.substr(mark + 1), link.second);
    ATTN_CHECK(ok, "bad alignment link '", std::string(token), "': expected i-j (or i?j, ipj for a possible link)");
    (token[mark] == '-' ? links.sure : links.possible).insert(link);
  }
  for (const AlignmentLink& link : links.sure) links.possible.erase(link);  // marked both ways: sure
  return links;
}

AlignmentCounts& AlignmentCounts::operator+=(const AlignmentCounts& other) {
  predicted += other.predicted;
  sure += other.sure;
  possible += other.possible;
  predicted_sure += other.predicted_sure;
  predicted_possible += other.predicted_possible;
  return *this;
}

AlignmentCounts count_alignment(const AlignmentLinks& predicted, const AlignmentLinks& gold) {
  std::set<AlignmentLink> links = predicted.sure;
  links.insert(predicted.possible.begin(), predicted.possible.end());
  AlignmentCounts counts;
  counts.predicted = int64_t(links.size());
  counts.sure = int64_t(gold.sure.size());
  counts.possible = int64_t(gold.sure.size() + gold.possible.size());
  counts.predicted_sure = int64_t(intersection_size(links, gold.sure));
  counts.predicted_possible = counts.predicted_sure + int64_t(intersection_size(links, gold.possible));
  return counts;
}

AlignmentScore alignment_score_from_counts(const AlignmentCounts& counts, int64_t sentences) {
  AlignmentScore score;
  score.counts = counts;
  score.sentences = sentences;
  score.precision = ratio(counts.predicted_possible, counts.predicted);
  score.recall = ratio(counts.predicted_sure, counts.sure);
  const double sum = score.precision + score.recall;
  score.f1 = sum > 0 ? 2 * score.precision * score.recall / sum : 0.0;
  score.aer = 1.0 - (counts.predicted + counts.sure > 0 ? double(counts.predicted_sure + counts.predicted_possible) /
                                                              double(counts.predicted + counts.sure)
                                                        : 1.0);
  return score;
}

std::vector<AlignmentLinks> parse_alignment_lines(const std::vector<std::string>& lines, const std::string& name) {
  std::vector<AlignmentLinks> links;
  links.reserve(lines.size());
  for (size_t i = 0; i < lines.size(); ++i) {
    try {
      links.push_back(parse_alignment_line(lines[i]));
    } catch (const Error& error) {
      throw Error(name + " line " + std::to_string(i + 1) + ": " + error.what());
    }
  }
  return links;
}

AlignmentScore score_alignments(const std::vector<std::string>& gold, const std::vector<std::string>& predicted,
                                const std::string& gold_name, const std::string& predicted_name) {
  ATTN_CHECK(gold.size() == predicted.size(), "line counts differ: predicted alignments ", predicted_name, " have ",
             predicted.size(), " lines, gold alignments ", gold_name, " have ", gold.size());
  ATTN_CHECK(!gold.empty(), "nothing to score: the alignments ", predicted_name, " and ", gold_name, " are empty");
  const std::vector<AlignmentLinks> predicted_links = parse_alignment_lines(predicted, predicted_name);
  const std::vector<AlignmentLinks> gold_links = parse_alignment_lines(gold, gold_name);
  AlignmentCounts total;
  for (size_t i = 0; i < gold.size(); ++i) total += count_alignment(predicted_links[i], gold_links[i]);
  return alignment_score_from_counts(total, int64_t(gold.size()));
}

AlignmentScore score_alignment_files(const std::string& gold_path, const std::string& predicted_path) {
  const std::vector<std::string> gold = read_file_lines(gold_path);
  const std::vector<std::string> predicted =
      predicted_path.empty() ? read_lines(std::cin) : read_file_lines(predicted_path);
  return score_alignments(gold, predicted, "'" + gold_path + "'",
                          predicted_path.empty() ? "<stdin>" : "'" + predicted_path + "'");
}

std::string AlignmentScore::format() const {
  return "AER = " + fixed4(aer) + " precision = " + fixed4(precision) + " recall = " + fixed4(recall) +
         " F1 = " + fixed4(f1) + " (sentences = " + std::to_string(sentences) +
         " predicted = " + std::to_string(counts.predicted) + " sure = " + std::to_string(counts.sure) +
         " possible = " + std::to_string(counts.possible) + ")\n";
}

nlohmann::json AlignmentScore::to_json() const {
  return {{"aer", aer},
          {"precision", precision},
          {"recall", recall},
          {"f1", f1},
          {"sentences", sentences},
          {"predicted_links", counts.predicted},
          {"sure_links", counts.sure},
          {"possible_links", counts.possible},
          {"predicted_sure", counts.predicted_sure},
          {"predicted_possible", counts.predicted_possible}};
}

}  // namespace attn::eval
