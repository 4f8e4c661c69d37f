#pragma once
// The decoding benchmark behind `attn-bench decode`: sentences/s and target tokens/s of greedy
// or beam search, on the lines of a file through a trained run (the real path, tokenization
// included) or on random token sequences through an untrained model of a config.
#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "decode/translator.h"
#include "models/seq2seq_model.h"

namespace attn::bench {

struct DecodeBenchmarkResult {
  int beam = 1;
  int batch_size = 1;
  int64_t sentences = 0;
  int64_t target_tokens = 0;  // output tokens, eos included
  double seconds = 0;
  double sentences_per_s = 0;
  double tokens_per_s = 0;
  int64_t batch_tokens = 0;
  double peak_rss_mb = 0;   // the process's, model and load included
  double pool_peak_mb = 0;  // the buffer pool's most live + cached bytes while decoding (weights included)
  double gflops = 0;        // the model's matmul FLOPs (ops::gemm_flops) over the timed run / its time
  double peak_gflops = 0;   // matmul peak at the same precision (ops::measure_matmul_peak); 0 = not measured
  double mfu = 0;           // gflops / peak_gflops; 0 when the peak was not measured
  std::string precision;    // of the matmuls (f32, bf16, int8): the caller's to fill in

  nlohmann::json to_json() const;
  std::string to_text() const;
};

// Translates `lines` with the translator's options and times it, a window of
// options.window_batches batches at a time as attn-translate does (0: all lines at once,
// sorted by length as a whole, to measure what the window costs).
DecodeBenchmarkResult run_decode_benchmark(const decode::Translator& translator, const std::vector<std::string>& lines,
                                           const decode::TranslateOptions& options);

// Searches `sentences` random id sequences of `source_length` tokens, in batches as
// decode::length_sorted_batches cuts them.
DecodeBenchmarkResult run_random_decode_benchmark(const models::Seq2SeqModel& model, int64_t sentences,
                                                  int64_t source_length, const decode::TranslateOptions& options,
                                                  uint64_t seed);

}  // namespace attn::bench
