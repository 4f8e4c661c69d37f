// run_random_decode_benchmark: its batches follow decode.batch_tokens, and its result reports
// the buffer pool's peak while decoding.
#include <catch2/catch.hpp>

#include "bench/decode_benchmark.h"
#include "models/tiny_models.h"

using namespace attn;

TEST_CASE("the decode benchmark reports the pool's peak - and decodes the same with a token budget", "[bench]") {
  auto model = attn::testing::tiny_transformer();
  decode::TranslateOptions options;
  options.search.beam = 2;
  options.batch_size = 8;
  const bench::DecodeBenchmarkResult unbounded = bench::run_random_decode_benchmark(*model, 20, 12, options, 1);
  options.batch_tokens = 24;  // 2 sentences of 12 tokens per batch
  const bench::DecodeBenchmarkResult budgeted = bench::run_random_decode_benchmark(*model, 20, 12, options, 1);
  CHECK(unbounded.sentences == 20);
  CHECK(budgeted.sentences == 20);
  CHECK(budgeted.target_tokens == unbounded.target_tokens);
  // The weights at least are live while decoding.
  CHECK(budgeted.pool_peak_mb > 0);
  const nlohmann::json json = budgeted.to_json();
  CHECK(json.at("batch_tokens") == 24);
  CHECK(json.at("pool_peak_mb").get<double>() == budgeted.pool_peak_mb);
}
