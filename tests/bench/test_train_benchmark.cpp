// run_train_benchmark refuses options that leave nothing to measure (it used to read the
// median of zero timed steps).
#include <catch2/catch.hpp>

#include "bench/train_benchmark.h"

using namespace attn;

TEST_CASE("run_train_benchmark refuses zero timed steps and empty batches", "[bench]") {
  io::Config config;
  bench::TrainBenchmarkOptions options;
  options.steps = 0;
  CHECK_THROWS_WITH(bench::run_train_benchmark(config, options), Catch::Contains("steps must be >= 1"));
  options.steps = 1;
  options.warmup = -1;
  CHECK_THROWS_WITH(bench::run_train_benchmark(config, options), Catch::Contains("warmup steps >= 0"));
  options.warmup = 0;
  options.target_length = 0;
  CHECK_THROWS_WITH(bench::run_train_benchmark(config, options), Catch::Contains("batch sizes must be >= 1"));
}

TEST_CASE("run_train_benchmark runs the fused and the unfused loss - counting the same model FLOPs", "[bench]") {
  io::Config config;
  config.vocab.size = 300;
  config.model.transformer.d_model = 16;
  config.model.transformer.heads = 2;
  config.model.transformer.ffn_dim = 32;
  config.model.transformer.encoder_layers = config.model.transformer.decoder_layers = 1;
  bench::TrainBenchmarkOptions options;
  options.batch_sentences = 4;
  options.source_length = options.target_length = 6;
  options.steps = 1;
  options.warmup = 0;
  options.measure_peak = false;
  bench::TrainBenchmarkResult fused = bench::run_train_benchmark(config, options);
  options.unfused_loss = true;
  bench::TrainBenchmarkResult unfused = bench::run_train_benchmark(config, options);
  CHECK(fused.loss == "fused");
  CHECK(unfused.loss == "unfused");
  CHECK(unfused.to_json().at("loss") == "unfused");
  // The fused backward recomputes the logits, which are not the model's FLOPs.
  CHECK(fused.gflops * fused.step_median_s == Approx(unfused.gflops * unfused.step_median_s).epsilon(1e-9));
}
