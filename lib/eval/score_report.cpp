#include "eval/score_report.h"

#include <fstream>
#include <iostream>

#include "core/check.h"

namespace attn::eval {

std::string ScoreReport::format() const {
  return bleu.format() + "\n  signature: " + bleu.signature() + "\n" + chrf.format() +
         "\n  signature: " + chrf.signature() + "\n";
}

nlohmann::json ScoreReport::to_json() const {
  return {
      {"bleu", bleu.score},
      {"bleu_signature", bleu.signature()},
      {"bleu_verbose", bleu.format()},
      {"precisions", bleu.precisions},
      {"bp", bleu.bp},
      {"ratio", bleu.ratio},
      {"hyp_len", bleu.hyp_len},
      {"ref_len", bleu.ref_len},
      {"chrf", chrf.score},
      {"chrf_signature", chrf.signature()},
  };
}

ScoreReport score_corpus(const std::vector<std::string>& hyps, const std::vector<std::string>& refs,
                         int chrf_word_order) {
  return {corpus_bleu(hyps, refs), corpus_chrf(hyps, refs, chrf_word_order)};
}

std::vector<std::string> read_lines(std::istream& in) {
  std::vector<std::string> lines;
  for (std::string line; std::getline(in, line);) lines.push_back(std::move(line));
  return lines;
}

std::vector<std::string> read_file_lines(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  ATTN_CHECK(in.good(), "cannot open '", path, "'");
  return read_lines(in);
}

std::vector<std::string> read_hypotheses(const std::string& hyp_path, size_t reference_lines,
                                         const std::string& ref_path) {
  const std::string hyp_name = hyp_path.empty() ? "<stdin>" : "'" + hyp_path + "'";
  std::vector<std::string> hyps = hyp_path.empty() ? read_lines(std::cin) : read_file_lines(hyp_path);
  ATTN_CHECK(hyps.size() == reference_lines, "line counts differ: hypotheses ", hyp_name, " have ", hyps.size(),
             " lines, references '", ref_path, "' have ", reference_lines);
  return hyps;
}

ScoreReport score_files(const std::string& ref_path, const std::string& hyp_path, int chrf_word_order) {
  const std::vector<std::string> refs = read_file_lines(ref_path);
  return score_corpus(read_hypotheses(hyp_path, refs.size(), ref_path), refs, chrf_word_order);
}

}  // namespace attn::eval
