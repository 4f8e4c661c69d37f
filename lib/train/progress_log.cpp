#include "train/progress_log.h"

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

}  // namespace attn::train
