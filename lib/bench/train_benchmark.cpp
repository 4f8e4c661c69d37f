#include "bench/train_benchmark.h"

#include <algorithm>
#include <chrono>
#include <spdlog/fmt/fmt.h>

#include "core/check.h"
#include "core/process_memory.h"
#include "data/batch.h"
#include "data/vocab.h"
#include "dnnl/context.h"
#include "models/model_factory.h"
#include "ops/gemm.h"
#include "ops/precision.h"
#include "train/train_step.h"

namespace attn::bench {

namespace {

// B sentences of exactly S source and T target tokens (eos last), random ids above the specials.
data::Batch synthetic_batch(const TrainBenchmarkOptions& options, int64_t vocab, Rng& rng) {
  std::vector<data::Example> examples(options.batch_sentences);
  for (auto& example : examples) {
    for (int64_t i = 0; i + 1 < options.source_length; ++i) example.src.push_back(int32_t(4 + rng.below(vocab - 4)));
    for (int64_t i = 0; i + 1 < options.target_length; ++i) example.tgt.push_back(int32_t(4 + rng.below(vocab - 4)));
    example.src.push_back(data::kEosId);
    example.tgt.push_back(data::kEosId);
  }
  std::vector<const data::Example*> pointers;
  for (const auto& example : examples) pointers.push_back(&example);
  return data::make_batch(pointers, 1);
}

}  // namespace

TrainBenchmarkResult run_train_benchmark(const io::Config& config, const TrainBenchmarkOptions& options) {
  // No timed step leaves no median to report (and a crash where it was read).
  ATTN_CHECK(options.steps >= 1 && options.warmup >= 0, "benchmark steps must be >= 1 and warmup steps >= 0; got ",
             options.steps, " and ", options.warmup);
  ATTN_CHECK(options.batch_sentences >= 1 && options.source_length >= 1 && options.target_length >= 1,
             "benchmark batch sizes must be >= 1; got ", options.batch_sentences, " sentences of ",
             options.source_length, " x ", options.target_length, " tokens");
  int64_t vocab = config.vocab.size;
  auto model = models::make_model(config, {vocab, vocab});
  const models::LossKernel loss = options.unfused_loss ? models::LossKernel::unfused : models::LossKernel::fused;
  train::TrainStep train_step(*model, config, ops::resolve_precision(config.train.precision, "train.precision"),
                              loss);  // the update rule attn-train runs
  Rng rng(static_cast<uint64_t>(config.train.seed));
  Rng dropout_rng(rng.next_u64());
  data::Batch batch = synthetic_batch(options, vocab, rng);
  auto& cache = dnn::Context::get().cache();

  std::vector<double> seconds;
  uint64_t flops = 0;
  for (int step = 0; step < options.warmup + options.steps; ++step) {
    if (step == options.warmup) {
      cache.reset_counters();
      ops::reset_gemm_flops();
    }
    auto start = std::chrono::steady_clock::now();
    train::StepStats stats = train_step.accumulate({batch}, batch.tgt_tokens, dropout_rng);
    train_step.update(stats, step + 1);
    if (step >= options.warmup)
      seconds.push_back(std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
  }
  flops = ops::gemm_flops() / std::max(options.steps, 1);

  TrainBenchmarkResult result;
  result.precision = choice_name(train_step.precision());
  result.loss = options.unfused_loss ? "unfused" : "fused";
  std::vector<double> sorted = seconds;
  std::sort(sorted.begin(), sorted.end());
  result.step_median_s = sorted[sorted.size() / 2];
  result.step_min_s = sorted.front();
  result.step_max_s = sorted.back();
  result.tokens_per_s = double(options.batch_sentences * options.target_length) / result.step_median_s;
  result.gflops = double(flops) / result.step_median_s / 1e9;
  result.cache_hit_rate = cache.hit_rate();
  result.parameters = static_cast<int64_t>(model->parameters().parameter_count());
  if (options.measure_peak) {
    result.peak_gflops = ops::measure_matmul_peak(train_step.precision());
    result.mfu = result.gflops / result.peak_gflops;
  }
  result.peak_rss_mb = peak_resident_mb();
  return result;
}

nlohmann::json TrainBenchmarkResult::to_json() const {
  return {{"precision", precision},
          {"loss", loss},
          {"step_median_s", step_median_s},
          {"step_min_s", step_min_s},
          {"step_max_s", step_max_s},
          {"tokens_per_s", tokens_per_s},
          {"gflops", gflops},
          {"peak_gflops", peak_gflops},
          {"mfu", mfu},
          {"peak_rss_mb", peak_rss_mb},
          {"cache_hit_rate", cache_hit_rate},
          {"parameters", parameters}};
}

std::string TrainBenchmarkResult::to_text() const {
  return fmt::format(
      "precision {} | {} loss | {} parameters\n"
      "step median {:.4f} s (min {:.4f}, max {:.4f})\n"
      "{:.0f} target tokens/s | {:.1f} model GFLOP/s | matmul peak {:.1f} GFLOP/s | MFU {:.1f}%\n"
      "peak RSS {:.0f} MiB | primitive cache hit rate {:.2f}%",
      precision, loss, parameters, step_median_s, step_min_s, step_max_s, tokens_per_s, gflops, peak_gflops, 100 * mfu,
      peak_rss_mb, 100 * cache_hit_rate);
}

}  // namespace attn::bench
