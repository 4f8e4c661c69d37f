#include "bench/decode_benchmark.h"

#include <chrono>
#include <spdlog/fmt/fmt.h>

#include "core/buffer_pool.h"
#include "core/process_memory.h"
#include "core/rng.h"
#include "ops/gemm.h"

namespace attn::bench {

namespace {

using Clock = std::chrono::steady_clock;

// A result with the search's shape and nothing counted yet.
DecodeBenchmarkResult empty_result(const decode::TranslateOptions& options) {
  DecodeBenchmarkResult result;
  result.beam = options.search.beam;
  result.batch_size = options.batch_size;
  result.batch_tokens = options.batch_tokens;
  BufferPool::instance().reset_peak();  // decoding's peak, not loading's
  ops::reset_gemm_flops();              // decoding's FLOPs, not the load's probes
  return result;
}

DecodeBenchmarkResult finish(DecodeBenchmarkResult result, Clock::time_point start) {
  result.seconds = std::chrono::duration<double>(Clock::now() - start).count();
  result.sentences_per_s = result.sentences / result.seconds;
  result.tokens_per_s = result.target_tokens / result.seconds;
  result.gflops = double(ops::gemm_flops()) / result.seconds / 1e9;
  result.peak_rss_mb = peak_resident_mb();
  result.pool_peak_mb = double(BufferPool::instance().stats().peak_bytes) / double(1 << 20);
  return result;
}

}  // namespace

DecodeBenchmarkResult run_decode_benchmark(const decode::Translator& translator, const std::vector<std::string>& lines,
                                           const decode::TranslateOptions& options) {
  DecodeBenchmarkResult result = empty_result(options);
  auto start = Clock::now();
  auto count = [&](const std::vector<decode::Translation>& translations) {
    for (const auto& translation : translations) {
      ++result.sentences;
      if (!translation.nbest.empty()) result.target_tokens += int64_t(translation.nbest.front().tokens.size());
    }
  };
  if (options.window_batches <= 0) {
    count(translator.translate(lines));
    return finish(result, start);
  }
  // Window by window, as attn-translate reads a file.
  decode::TranslationWindow window(translator);
  for (const auto& line : lines)
    if (window.add(line)) count(window.translate());
  count(window.translate());
  return finish(result, start);
}

DecodeBenchmarkResult run_random_decode_benchmark(const models::Seq2SeqModel& model, int64_t sentences,
                                                  int64_t source_length, const decode::TranslateOptions& options,
                                                  uint64_t seed) {
  Rng rng(seed);
  int64_t vocab = model.target_vocab_size();
  std::vector<std::vector<int32_t>> sources(sentences);
  for (auto& source : sources) {
    for (int64_t i = 0; i + 1 < source_length; ++i) source.push_back(int32_t(4 + rng.below(vocab - 4)));
    source.push_back(data::kEosId);
  }
  DecodeBenchmarkResult result = empty_result(options);
  auto start = Clock::now();
  for (const std::vector<int64_t>& batch :
       decode::length_sorted_batches(sources, options.batch_size, options.batch_tokens)) {
    std::vector<const std::vector<int32_t>*> batch_sources;
    std::vector<uint64_t> streams;  // sampling's, one per sentence as attn-translate's per line
    for (int64_t i : batch) {
      batch_sources.push_back(&sources[i]);
      streams.push_back(uint64_t(i + 1));
    }
    for (const auto& nbest : decode::search(model, decode::source_batch(batch_sources), options.search, streams)) {
      ++result.sentences;
      result.target_tokens += int64_t(nbest.front().tokens.size());
    }
  }
  return finish(result, start);
}

nlohmann::json DecodeBenchmarkResult::to_json() const {
  return {{"beam", beam},
          {"batch_size", batch_size},
          {"batch_tokens", batch_tokens},
          {"sentences", sentences},
          {"target_tokens", target_tokens},
          {"seconds", seconds},
          {"sentences_per_s", sentences_per_s},
          {"tokens_per_s", tokens_per_s},
          {"peak_rss_mb", peak_rss_mb},
          {"pool_peak_mb", pool_peak_mb},
          {"gflops", gflops},
          {"peak_gflops", peak_gflops},
          {"mfu", mfu},
          {"precision", precision}};
}

std::string DecodeBenchmarkResult::to_text() const {
  return fmt::format(
      "beam {} | batch {} ({} tokens) | {} | {} sentences, {} target tokens in {:.2f} s\n"
      "{:.1f} sentences/s | {:.0f} target tokens/s | {:.1f} model GFLOP/s{} | peak RSS {:.0f} MB | pool peak {:.0f} MB",
      beam, batch_size, batch_tokens, precision, sentences, target_tokens, seconds, sentences_per_s, tokens_per_s,
      gflops, peak_gflops > 0 ? fmt::format(" (MFU {:.1f}% of {:.0f})", 100 * mfu, peak_gflops) : "", peak_rss_mb,
      pool_peak_mb);
}

}  // namespace attn::bench
