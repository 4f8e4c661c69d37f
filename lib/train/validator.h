#pragma once
// Validator: the dev-set check run every train.valid_every steps: teacher-forced loss and
// perplexity, and BLEU + chrF of greedy translations against the raw references.
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
  // The value train.valid_metric names, oriented so that higher is better.
  double metric(ValidMetric name) const;
};

class Validator {
 public:
  Validator(const io::Config& config, const run::Vocabularies& vocab);
  // Loss and greedy BLEU/chrF of `model` on the dev set, its activations' products in
  // `precision` (training's: the weights are in their training forms too).
  ValidationResult run(const models::Seq2SeqModel& model, Precision precision) const;

 private:
  const run::Vocabularies& vocab_;
  io::Config config_;
  std::vector<std::string> sources_, references_;
  std::vector<data::Batch> batches_;
};

}  // namespace attn::train
