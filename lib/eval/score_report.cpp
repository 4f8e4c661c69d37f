#include "eval/score_report.h"

#include <fstream>
#include <iostream>

#include "core/check.h"

namespace attn::eval {

namespace {

std::vector<std::string> read_file_lines(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  ATTN_CHECK(in.good(), "cannot open '", path, "'");
  return read_lines(in);
}

}  // namespace

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

ScoreReport score_corpus(const std::vector<std::string>& hyps, const std::vector<std::string>& refs) {
  return {corpus_bleu(hyps, refs), corpus_chrf(hyps, refs)};
}

std::vector<std::string> read_lines(std::istream& in) {
  std::vector<std::string> lines;
  for (std::string line; std::getline(in, line);) lines.push_back(std::move(line));
  return lines;
}

ScoreReport score_files(const std::string& ref_path, const std::string& hyp_path) {
  const std::vector<std::string> refs = read_file_lines(ref_path);
  const std::string hyp_name = hyp_path.empty() ? "<stdin>" : "'" + hyp_path + "'";
  const std::vector<std::string> hyps = hyp_path.empty() ? read_lines(std::cin) : read_file_lines(hyp_path);
  ATTN_CHECK(hyps.size() == refs.size(), "line counts differ: hypotheses ", hyp_name, " have ", hyps.size(),
             " lines, references '", ref_path, "' have ", refs.size());
  return score_corpus(hyps, refs);
}

}  // namespace attn::eval
