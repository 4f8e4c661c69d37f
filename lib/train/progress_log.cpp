#include "train/progress_log.h"

#include <cmath>
#include <spdlog/spdlog.h>

#include "core/check.h"

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

std::string format_duration(double seconds) {
  if (!std::isfinite(seconds) || seconds < 0) return "?";
  long total = std::lround(seconds);
  long hours = total / 3600, minutes = (total % 3600) / 60, secs = total % 60;
  char text[32];
  if (hours > 0)
    std::snprintf(text, sizeof text, "%ldh%02ldm", hours, minutes);
  else if (minutes > 0)
    std::snprintf(text, sizeof text, "%ldm%02lds", minutes, secs);
  else
    std::snprintf(text, sizeof text, "%lds", secs);
  return text;
}

}  // namespace attn::train
