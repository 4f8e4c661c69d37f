#pragma once
// Scoring a hypothesis file against a reference file: what `attn-score` prints.
//
// Lines are read as sacreBLEU reads them (split on '\n' only, '\r' kept: both metrics
// ignore trailing whitespace anyway), then scored with corpus BLEU and chrF2.
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

ScoreReport score_corpus(const std::vector<std::string>& hyps, const std::vector<std::string>& refs);

// Every line of a stream, without its '\n'.
std::vector<std::string> read_lines(std::istream& in);

// Scores hyp_path (standard input when empty) against ref_path. A line-count mismatch is an
// attn::Error naming both files and both counts.
ScoreReport score_files(const std::string& ref_path, const std::string& hyp_path);

}  // namespace attn::eval
