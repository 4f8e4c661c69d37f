#pragma once
// The config every training test starts from: corpus files train.{src,tgt} and
// valid.{src,tgt} in `dir` (the caller writes them), run directory dir/run, a 64-piece joint
// vocabulary, a one-layer width-16 model of `model_type` ("transformer" or "rnn"), and one
// thread, because ctest runs tests side by side. Callers merge their own keys on top.
#include <string>

#include <nlohmann/json.hpp>

#include "temp_dir.h"

namespace attn::testing {

nlohmann::json tiny_config(const TempDir& dir, const std::string& model_type = "transformer");

}  // namespace attn::testing
