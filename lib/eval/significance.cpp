#include "eval/significance.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "core/check.h"
#include "eval/corpus_stats.h"

namespace attn::eval {

namespace {

constexpr double kSignificanceLevel = 0.05;

// One system's scores on the test set and on every resample.
struct ResampledSystem {
  ScoreReport scores;
  std::vector<double> bleu, chrf;  // resample r at [r]
};

ResampledSystem resample_system(const std::vector<std::string>& hyps, const std::vector<std::string>& refs,
                                const Resamples& resamples, int chrf_word_order) {
  check_chrf_word_order(chrf_word_order);  // before the parallel loops, which must not throw
  const std::vector<BleuStats> bleu_stats = sentence_stats<BleuStats>(hyps, refs, bleu_sentence_stats);
  const auto chrf_of = [chrf_word_order](const std::string& hyp, const std::string& ref) {
    return chrf_sentence_stats(hyp, ref, chrf_word_order);
  };
  const std::vector<ChrfStats> chrf_stats = sentence_stats<ChrfStats>(hyps, refs, chrf_of);
  ResampledSystem system;
  system.scores = {bleu_from_stats(sum_stats(bleu_stats)), chrf_from_stats(sum_stats(chrf_stats), chrf_word_order)};
  system.bleu = resampled_scores(bleu_stats, resamples, [](const BleuStats& s) { return bleu_from_stats(s).score; });
  system.chrf = resampled_scores(chrf_stats, resamples, [chrf_word_order](const ChrfStats& s) {
    return chrf_from_stats(s, chrf_word_order).score;
  });
  return system;
}

MetricEstimate estimate(double score, const std::vector<double>& resample_scores) {
  return {score, estimate_ci(resample_scores), std::nullopt};
}

// The estimate of a tested system, with its p-value against the baseline's resample scores.
MetricEstimate tested_estimate(double score, const std::vector<double>& resample_scores, double baseline_score,
                               const std::vector<double>& baseline_resample_scores) {
  MetricEstimate result = estimate(score, resample_scores);
  result.p_value =
      paired_bootstrap_p_value(resample_scores, baseline_resample_scores, std::abs(score - baseline_score));
  return result;
}

std::string fixed(double value, int decimals) {
  char buffer[64];
  std::snprintf(buffer, sizeof buffer, "%.*f", decimals, value);
  return buffer;
}

// "35.21 (μ = 35.20 ± 1.10)"
std::string format_estimate(const MetricEstimate& metric) {
  return fixed(metric.score, 2) + " (μ = " + fixed(metric.estimate.mean, 2) + " ± " + fixed(metric.estimate.ci, 2) +
         ")";
}

// "35.21 (μ = 35.20 ± 1.10) p = 0.0010*", or without the p-value for the baseline.
std::string format_cell(const MetricEstimate& metric) {
  std::string cell = format_estimate(metric);
  if (metric.p_value) cell += " p = " + fixed(*metric.p_value, 4) + (*metric.p_value < kSignificanceLevel ? "*" : "");
  return cell;
}

// Widths count code points: the cells hold "μ" and "±".
size_t display_width(const std::string& text) {
  size_t code_points = 0;
  for (unsigned char c : text) code_points += (c & 0xC0) != 0x80;
  return code_points;
}

std::string pad(const std::string& text, size_t width) {
  const size_t shown = display_width(text);
  return text + std::string(width > shown ? width - shown : 0, ' ');
}

void add_metric_json(nlohmann::json& out, const std::string& key, const MetricEstimate& metric) {
  out[key] = metric.score;
  out[key + "_mean"] = metric.estimate.mean;
  out[key + "_ci"] = metric.estimate.ci;
  if (metric.p_value) out[key + "_p_value"] = *metric.p_value;
}

}  // namespace

ConfidenceReport bootstrap_confidence(const std::vector<std::string>& hyps, const std::vector<std::string>& refs,
                                      const BootstrapOptions& options) {
  check_corpus(hyps, refs);
  const Resamples resamples(refs.size(), options.resamples, options.seed);
  const ResampledSystem system = resample_system(hyps, refs, resamples, options.chrf_word_order);
  return {system.scores, estimate(system.scores.bleu.score, system.bleu),
          estimate(system.scores.chrf.score, system.chrf), options};
}

PairedBootstrapReport paired_bootstrap(const std::vector<NamedHypotheses>& systems,
                                       const std::vector<std::string>& refs, const BootstrapOptions& options) {
  ATTN_CHECK(systems.size() >= 2, "the paired bootstrap needs a baseline and at least one system; got ", systems.size(),
             " system(s)");
  for (const NamedHypotheses& system : systems) check_corpus(system.lines, refs);
  const Resamples resamples(refs.size(), options.resamples, options.seed);
  PairedBootstrapReport report;
  report.sentences = refs.size();
  report.options = options;
  const ResampledSystem baseline = resample_system(systems[0].lines, refs, resamples, options.chrf_word_order);
  report.bleu_signature = bootstrap_signature(baseline.scores.bleu.signature(), options.resamples, options.seed);
  report.chrf_signature = bootstrap_signature(baseline.scores.chrf.signature(), options.resamples, options.seed);
  report.chrf_name = baseline.scores.chrf.name();
  report.systems.push_back({systems[0].name, estimate(baseline.scores.bleu.score, baseline.bleu),
                            estimate(baseline.scores.chrf.score, baseline.chrf)});
  for (size_t s = 1; s < systems.size(); ++s) {
    const ResampledSystem tested = resample_system(systems[s].lines, refs, resamples, options.chrf_word_order);
    report.systems.push_back(
        {systems[s].name,
         tested_estimate(tested.scores.bleu.score, tested.bleu, baseline.scores.bleu.score, baseline.bleu),
         tested_estimate(tested.scores.chrf.score, tested.chrf, baseline.scores.chrf.score, baseline.chrf)});
  }
  return report;
}

ConfidenceReport confidence_files(const std::string& ref_path, const std::string& hyp_path,
                                  const BootstrapOptions& options) {
  const std::vector<std::string> refs = read_file_lines(ref_path);
  return bootstrap_confidence(read_hypotheses(hyp_path, refs.size(), ref_path), refs, options);
}

PairedBootstrapReport paired_bootstrap_files(const std::string& ref_path, const std::vector<std::string>& hyp_paths,
                                             const BootstrapOptions& options) {
  const std::vector<std::string> refs = read_file_lines(ref_path);
  std::vector<NamedHypotheses> systems;
  for (const std::string& path : hyp_paths) systems.push_back({path, read_hypotheses(path, refs.size(), ref_path)});
  return paired_bootstrap(systems, refs, options);
}

std::string ConfidenceReport::format() const {
  const auto with_bootstrap = [this](const std::string& signature) {
    return bootstrap_signature(signature, options.resamples, options.seed);
  };
  return "BLEU = " + format_estimate(bleu) + " " + scores.bleu.format_details() +
         "\n  signature: " + with_bootstrap(scores.bleu.signature()) + "\n" + scores.chrf.name() + " = " +
         format_estimate(chrf) + "\n  signature: " + with_bootstrap(scores.chrf.signature()) + "\n";
}

nlohmann::json ConfidenceReport::to_json() const {
  nlohmann::json out = scores.to_json();
  out["bleu_signature"] = bootstrap_signature(scores.bleu.signature(), options.resamples, options.seed);
  out["chrf_signature"] = bootstrap_signature(scores.chrf.signature(), options.resamples, options.seed);
  add_metric_json(out, "bleu", bleu);
  add_metric_json(out, "chrf", chrf);
  out["resamples"] = options.resamples;
  out["seed"] = options.seed;
  return out;
}

std::string PairedBootstrapReport::format() const {
  std::vector<std::vector<std::string>> rows = {{"System", "BLEU (μ ± 95% CI)", chrf_name + " (μ ± 95% CI)"}};
  for (size_t s = 0; s < systems.size(); ++s)
    rows.push_back(
        {(s == 0 ? "Baseline: " : "") + systems[s].name, format_cell(systems[s].bleu), format_cell(systems[s].chrf)});
  std::vector<size_t> widths(rows[0].size(), 0);
  for (const auto& row : rows)
    for (size_t c = 0; c < row.size(); ++c) widths[c] = std::max(widths[c], display_width(row[c]));
  std::string out = "Paired bootstrap resampling: " + std::to_string(sentences) + " sentences, " +
                    std::to_string(options.resamples) + " resamples, seed " + std::to_string(options.seed) + "\n";
  for (const auto& row : rows) {
    std::string line;
    for (size_t c = 0; c < row.size(); ++c) line += c + 1 < row.size() ? pad(row[c], widths[c] + 3) : row[c];
    out += line + "\n";
  }
  out += "* p < 0.05: the system differs significantly from the baseline\n";
  out += "  BLEU signature: " + bleu_signature + "\n  " + chrf_name + " signature: " + chrf_signature + "\n";
  return out;
}

nlohmann::json PairedBootstrapReport::to_json() const {
  nlohmann::json out = {{"test", "paired-bs"},   {"sentences", sentences},           {"resamples", options.resamples},
                        {"seed", options.seed},  {"bleu_signature", bleu_signature}, {"chrf_signature", chrf_signature},
                        {"chrf_name", chrf_name}};
  nlohmann::json entries = nlohmann::json::array();
  for (size_t s = 0; s < systems.size(); ++s) {
    nlohmann::json entry = {{"name", systems[s].name}, {"baseline", s == 0}};
    add_metric_json(entry, "bleu", systems[s].bleu);
    add_metric_json(entry, "chrf", systems[s].chrf);
    entries.push_back(std::move(entry));
  }
  out["systems"] = std::move(entries);
  return out;
}

}  // namespace attn::eval
