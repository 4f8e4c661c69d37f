#pragma once
// The training benchmark behind `attn-bench train`: full training steps of the model a config
// describes (train::TrainStep, the step attn-train runs: forward, backward, clipping, Adam with
// the config's train.* settings), on fixed-shape synthetic batches of random ids, timed step by
// step.
#include <cstdint>
#include <string>

#include <nlohmann/json.hpp>

#include "io/config.h"

namespace attn::bench {

struct TrainBenchmarkOptions {
  int64_t batch_sentences = 64;  // B
  int64_t source_length = 24;    // S
  int64_t target_length = 24;    // T
  int steps = 10;                // timed steps
  int warmup = 3;                // untimed steps first (primitive creation, first touches)
  bool measure_peak = true;
  // The loss before the fused one (logits (B, T, V), then cross-entropy over them), for the
  // before/after figures of the fused loss (models::sequence_loss).
  bool unfused_loss = false;
};

struct TrainBenchmarkResult {
  std::string precision;
  std::string loss;  // "fused" or "unfused"
  double step_median_s = 0, step_min_s = 0, step_max_s = 0;
  double tokens_per_s = 0;  // target tokens (B x T) per second at the median step
  double gflops = 0;        // model FLOPs per median step / its time
  double peak_gflops = 0;   // matmul peak in this process, same precision
  double mfu = 0;           // gflops / peak_gflops
  double peak_rss_mb = 0;
  double cache_hit_rate = 0;  // primitive cache, over the timed steps
  int64_t parameters = 0;

  nlohmann::json to_json() const;
  std::string to_text() const;
};

TrainBenchmarkResult run_train_benchmark(const io::Config& config, const TrainBenchmarkOptions& options);

}  // namespace attn::bench
