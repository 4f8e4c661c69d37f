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
