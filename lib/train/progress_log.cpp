#include "train/progress_log.h"

#include <cmath>
#include <spdlog/spdlog.h>

#include "core/check.h"
#include "io/config_reader.h"

namespace attn::train {

ProgressLog::ProgressLog(const std::string& jsonl_path) : jsonl_(jsonl_path, std::ios::app), path_(jsonl_path) {
  ATTN_CHECK(jsonl_.good(), "cannot open ", jsonl_path, " for writing");
}

void ProgressLog::write(const nlohmann::json& record, const std::string& console_line) {
  jsonl_ << record.dump() << '\n';
  jsonl_.flush();
  if (!jsonl_.good()) spdlog::warn("could not write to {}", path_);
  spdlog::info("{}", console_line);
}

void ProgressLog::write_train(const TrainProgress& p) {
  nlohmann::json record = {{"type", "train"},
                           {"step", p.step},
                           {"epoch", p.epoch},
                           {"pairs_seen", p.pairs_seen},
                           {"loss", p.loss},
                           {"ppl", p.perplexity},
                           {"lr", p.learning_rate},
                           {"grad_norm", p.grad_norm},
                           {"tokens_per_s", p.tokens_per_second},
                           {"primitive_cache_hit_rate", p.primitive_cache_hit_rate},
                           {"elapsed_s", p.elapsed_seconds},
                           {"skipped_steps", p.skipped_steps},
                           {"rss_mb", p.rss_mb},
                           {"pool_live_mb", p.pool_live_mb},
                           {"pool_cached_mb", p.pool_cached_mb},
                           {"primitive_cache_entries", p.primitive_cache_entries}};
  if (p.ranks > 1) {
    record["ranks"] = p.ranks;
    record["allreduce_s_per_step"] = p.allreduce_seconds_per_step;
  }
  const bool guided = !std::isnan(p.guided_loss);
  if (guided) record["guided_loss"] = p.guided_loss;
  write(record, fmt::format("step {:>6} | epoch {:>2} | loss {:.3f} | ppl {:7.2f}{} | lr {:.2e} | "
                            "{:6.0f} tok/s | elapsed {} | ETA {}",
                            p.step, p.epoch, p.loss, p.perplexity,
                            guided ? fmt::format(" | guided {:.3f}", p.guided_loss) : "", p.learning_rate,
                            p.tokens_per_second, rounded_duration(p.elapsed_seconds), rounded_duration(p.eta_seconds)));
}

void ProgressLog::write_valid(int64_t step, const ValidationResult& result, bool best, double elapsed_seconds) {
  nlohmann::json record = {
      {"type", "valid"},     {"step", step},        {"loss", result.loss}, {"ppl", result.perplexity},
      {"bleu", result.bleu}, {"chrf", result.chrf}, {"best", best},        {"elapsed_s", elapsed_seconds}};
  const bool aligned = !std::isnan(result.aer);
  if (aligned) record["dev_aer"] = result.aer;
  write(record, fmt::format("valid step {:>6} | loss {:.3f} | ppl {:.2f} | BLEU {:.2f} | chrF {:.2f}{}{}", step,
                            result.loss, result.perplexity, result.bleu, result.chrf,
                            aligned ? fmt::format(" | AER {:.4f}", result.aer) : "", best ? " | new best" : ""));
}

std::string rounded_duration(double seconds) {
  return std::isfinite(seconds) && seconds >= 0 ? io::format_duration(io::Duration{std::round(seconds)}) : "?";
}

void ProgressLog::write_precision(const ops::PrecisionChoice& choice) {
  nlohmann::json record = {{"type", "precision"},
                           {"requested", choice_name(choice.requested)},
                           {"precision", choice_name(choice.precision)},
                           {"reason", choice.reason}};
  if (choice.f32_gflops > 0) {
    record["f32_peak_gflops"] = choice.f32_gflops;
    record["bf16_peak_gflops"] = choice.bf16_gflops;
  }
  write(record, "precision: " + choice.reason);
}

}  // namespace attn::train
