#pragma once
// ProgressLog: every training/validation record goes to the console (one readable line via
// spdlog) and to OUTPUT_DIR/train.log.jsonl (one JSON object per line, for plots and scripts).
#include <cstdint>
#include <fstream>
#include <limits>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "ops/precision.h"
#include "train/validator.h"

namespace attn::train {

// The figures of one progress line: the steps since the previous line, up to `step`.
struct TrainProgress {
  int64_t step = 0;
  int64_t epoch = 0;
  std::vector<int64_t> pairs_seen;  // per corpus
  double loss = 0;                  // smoothed, per target token
  double perplexity = 0;
  float learning_rate = 0;
  double grad_norm = 0;  // of the last step
  // Guided alignment: the unweighted guided loss per linked target position; NaN when off.
  double guided_loss = std::numeric_limits<double>::quiet_NaN();
  double tokens_per_second = 0;
  double primitive_cache_hit_rate = 0;
  double elapsed_seconds = 0;
  int64_t skipped_steps = 0;
  double rss_mb = 0;
  // Where the resident memory goes: the tensor pool's live and free blocks, and the primitive
  // cache's entries (each a descriptor and its jitted code).
  double pool_live_mb = 0;
  double pool_cached_mb = 0;
  int64_t primitive_cache_entries = 0;
  int ranks = 1;
  double allreduce_seconds_per_step = 0;  // recorded with more than one rank
  double eta_seconds = 0;                 // infinite while unknown
};

class ProgressLog {
 public:
  explicit ProgressLog(const std::string& jsonl_path);
  // Writes `record` as one JSON line (flushed) and `console_line` to the console.
  void write(const nlohmann::json& record, const std::string& console_line);
  // A "train" record.
  void write_train(const TrainProgress& progress);
  // A "valid" record of the validation after step `step`; `best`: a new best metric.
  void write_valid(int64_t step, const ValidationResult& result, bool best, double elapsed_seconds);
  // What the run computes in, and why (config.json keeps the request, so that the run's config
  // stays the user's), with the measured peaks: what a run with train.precision auto records.
  void write_precision(const ops::PrecisionChoice& choice);

 private:
  std::ofstream jsonl_;
  std::string path_;
};

// Elapsed time and ETA on the console, to the second ("?" while unknown).
std::string rounded_duration(double seconds);

}  // namespace attn::train
