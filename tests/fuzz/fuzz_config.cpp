// libFuzzer target: the config path of attn-train, text -> JSON (comments, FILE:LINE:COLUMN
// errors) -> --set overrides -> strict typed read -> validation -> the resolved JSON a run
// writes to config.json, which must read back to the same config.
//
// Input: optional leading lines "@key=value" (each applied like --set key=value), then the
// config text. Every input must end in a Config or an attn::Error; any other exception, a
// crash or a sanitizer report is a bug.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <vector>

#include "io/config.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string text(reinterpret_cast<const char*>(data), size);
  std::vector<std::string> overrides;
  while (!text.empty() && text[0] == '@') {
    size_t newline = text.find('\n');
    overrides.push_back(text.substr(1, newline == std::string::npos ? std::string::npos : newline - 1));
    text = newline == std::string::npos ? "" : text.substr(newline + 1);
  }
  try {
    nlohmann::json j = attn::io::parse_config_text(text, "fuzz.json");
    for (const std::string& assignment : overrides) attn::io::apply_override(j, assignment);
    attn::io::Config config = attn::io::config_from_json(j);
    const nlohmann::json resolved = attn::io::config_to_json(config);
    // config.json must load again as the same config (attn-translate and --resume rely on it).
    if (attn::io::config_to_json(attn::io::config_from_json(nlohmann::json::parse(resolved.dump(2)))) != resolved)
      std::abort();
  } catch (const attn::Error&) {
  }
  return 0;
}
