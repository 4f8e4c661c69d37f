#pragma once
// Scoring a hypothesis file against a reference file: what `attn-score` prints.
//
// Lines are read as sacreBLEU reads them (split on '\n' only, '\r' kept: both metrics
// ignore trailing whitespace anyway), then scored with corpus BLEU and chrF2 (chrF++ with a
// word order of 2).
#include <istream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "eval/bleu.h"
#include "eval/chrf.h"

namespace attn::eval {

struct ScoreReport {
  BleuScore bleu;
  ChrfScore chrf;

  // Four lines: BLEU line, its signature, chrF line, its signature.
  std::string format() const;
  // {"bleu", "bleu_signature", "bleu_verbose", "precisions", "bp", "ratio", "hyp_len",
  //  "ref_len", "chrf", "chrf_signature"}; scores as full-precision numbers.
  nlohmann::json to_json() const;
};

ScoreReport score_corpus(const std::vector<std::string>& hyps, const std::vector<std::string>& refs,
                         int chrf_word_order = 0);

// Every line of a stream, without its '\n'.
std::vector<std::string> read_lines(std::istream& in);
// Every line of a file; an attn::Error naming it when it cannot be opened.
std::vector<std::string> read_file_lines(const std::string& path);

// The lines of hyp_path (standard input when empty), which must be as many as the
// references': a mismatch is an attn::Error naming both files and both counts.
std::vector<std::string> read_hypotheses(const std::string& hyp_path, size_t reference_lines,
                                         const std::string& ref_path);

// Scores hyp_path (standard input when empty) against ref_path, with read_hypotheses' errors.
ScoreReport score_files(const std::string& ref_path, const std::string& hyp_path, int chrf_word_order = 0);

}  // namespace attn::eval
