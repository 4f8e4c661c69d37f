#pragma once
// Validator: the dev-set check run every train.valid_every steps: teacher-forced loss and
// perplexity, and BLEU + chrF of greedy translations against the raw references.
#include <limits>
#include <string>
#include <vector>

#include "data/batch.h"
#include "io/config.h"
#include "models/seq2seq_model.h"
#include "run/run_files.h"

namespace attn::train {

struct ValidationResult {
  double loss = 0;  // label-smoothing-free cross-entropy per target token
  double perplexity = 0;
  double bleu = 0;
  double chrf = 0;
  int64_t sentences = 0;
  // With data.valid_alignment_gold: the AER (0..1) of the forced alignments; NaN otherwise.
  double aer = std::numeric_limits<double>::quiet_NaN();
  // The value train.valid_metric names, oriented so that higher is better.
  double metric(ValidMetric name) const;
};

class Validator {
 public:
  Validator(const io::Config& config, const run::Vocabularies& vocab);
  // Loss and greedy BLEU/chrF of `model` on the dev set, its activations' products in
  // `precision` (training's: the weights are in their training forms too).
  ValidationResult run(const models::Seq2SeqModel& model, Precision precision) const;
  // The AER of the model's forced word alignments of data.valid_alignment_gold.
  double alignment_error_rate(const models::Seq2SeqModel& model) const;

 private:
  const run::Vocabularies& vocab_;
  io::Config config_;
  std::vector<std::string> sources_, references_;
  std::vector<data::Batch> batches_;
  // data.valid_alignment_gold: its sides and gold links, line by line.
  std::vector<std::string> gold_sources_, gold_targets_, gold_links_;
};

}  // namespace attn::train
