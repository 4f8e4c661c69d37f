#pragma once
// What `attn-score --confidence` and `attn-score --paired-bs` report: BLEU and chrF of each
// system on the whole test set, with the mean and 95% interval over bootstrap resamples
// (eval/bootstrap.h), and for the paired test each system's p-value against the baseline,
// which is the first system (sacreBLEU's convention: its first -i file is the baseline).
// The statistics of each sentence are computed once per system; a resample only sums them.
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "eval/bootstrap.h"
#include "eval/score_report.h"

namespace attn::eval {

struct BootstrapOptions {
  int resamples = kDefaultResamples;
  uint64_t seed = kDefaultBootstrapSeed;
  int chrf_word_order = 0;
};

// One metric of one system: its score on the test set, the estimate over the resamples, and
// (systems of a paired test after the baseline) the p-value against the baseline.
struct MetricEstimate {
  double score = 0;
  BootstrapEstimate estimate;
  std::optional<double> p_value;
};

// --confidence: one system.
struct ConfidenceReport {
  ScoreReport scores;
  MetricEstimate bleu, chrf;
  BootstrapOptions options;

  // ScoreReport's four lines with "(μ = mean ± ci)" after each score and the bootstrap's
  // fields in the signatures.
  std::string format() const;
  // ScoreReport's JSON (signatures with the bootstrap's fields) and "bleu_mean", "bleu_ci",
  // "chrf_mean", "chrf_ci", "resamples", "seed".
  nlohmann::json to_json() const;
};

struct SystemEstimate {
  std::string name;
  MetricEstimate bleu, chrf;
};

// --paired-bs: systems[0] is the baseline (no p-value), the others are tested against it.
struct PairedBootstrapReport {
  std::vector<SystemEstimate> systems;
  size_t sentences = 0;
  std::string bleu_signature, chrf_signature, chrf_name;  // signatures with the bootstrap's fields
  BootstrapOptions options;

  // A table: a header line, one row per system ("score (μ = mean ± ci)", then "p = 0.0010*"
  // for a tested system, '*' when p < 0.05), a line explaining '*', and the two signatures.
  std::string format() const;
  // {"test": "paired-bs", "sentences", "resamples", "seed", "bleu_signature",
  //  "chrf_signature", "chrf_name", "systems": [{"name", "baseline", "bleu", "bleu_mean",
  //  "bleu_ci", "bleu_p_value" (tested systems), "chrf", "chrf_mean", "chrf_ci",
  //  "chrf_p_value"}, ...]}
  nlohmann::json to_json() const;
};

struct NamedHypotheses {
  std::string name;
  std::vector<std::string> lines;
};

// The same input errors as corpus_bleu; resamples < 1 is an attn::Error.
ConfidenceReport bootstrap_confidence(const std::vector<std::string>& hyps, const std::vector<std::string>& refs,
                                      const BootstrapOptions& options);
// At least two systems (a baseline and one to test), each with as many lines as refs.
PairedBootstrapReport paired_bootstrap(const std::vector<NamedHypotheses>& systems,
                                       const std::vector<std::string>& refs, const BootstrapOptions& options);

// The same over files, with score_files' errors (hyp_path empty: standard input); the
// systems are named by their paths.
ConfidenceReport confidence_files(const std::string& ref_path, const std::string& hyp_path,
                                  const BootstrapOptions& options);
PairedBootstrapReport paired_bootstrap_files(const std::string& ref_path, const std::vector<std::string>& hyp_paths,
                                             const BootstrapOptions& options);

}  // namespace attn::eval
