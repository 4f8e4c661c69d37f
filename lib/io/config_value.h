#pragma once
// One value of a resolved config by its dotted key (`attn-train --print output_dir`), so that
// scripts read a config through attn's own reader instead of scraping its JSON.
#include <string>

#include <nlohmann/json.hpp>

#include "io/config.h"

namespace attn::io {

// The value at `key` ("output_dir", "train.max_steps", "model.transformer"): a leaf or a
// whole section. An unknown key throws, naming it and suggesting the closest known one.
nlohmann::json config_value(const Config& config, const std::string& key);

// The value as a script wants it: a string without quotes, anything else as compact JSON.
std::string config_value_text(const Config& config, const std::string& key);

}  // namespace attn::io
