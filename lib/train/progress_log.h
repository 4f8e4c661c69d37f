#pragma once
// ProgressLog: every training/validation record goes to the console (one readable line via
// spdlog) and to OUTPUT_DIR/train.log.jsonl (one JSON object per line, for plots and scripts).
#include <fstream>
#include <string>

#include <nlohmann/json.hpp>

namespace attn::train {

class ProgressLog {
 public:
  explicit ProgressLog(const std::string& jsonl_path);
  // Writes `record` as one JSON line (flushed) and `console_line` to the console.
  void write(const nlohmann::json& record, const std::string& console_line);

 private:
  std::ofstream jsonl_;
  std::string path_;
};

}  // namespace attn::train
