#pragma once
// A tiny training run for in-process trainer tests: a synthetic corpus, the shared tiny
// vocabulary (copied in, so no test trains SentencePiece), and a tiny Transformer config with
// one thread and dropout on.
#include <map>
#include <string>

#include <nlohmann/json.hpp>

#include "io/checkpoint.h"
#include "io/config.h"
#include "temp_dir.h"
#include "train/train_state.h"
#include "train/trainer.h"

namespace attn::testing {

struct TinyRun {
  TempDir dir;
  io::Config config;
  std::string run_dir;

  // `train` is merged into the config's "train" section.
  explicit TinyRun(const nlohmann::json& train = nlohmann::json::object());

  std::string last_checkpoint() const { return run_dir + "/checkpoint.last.safetensors"; }
  std::string best_checkpoint() const { return run_dir + "/checkpoint.best.safetensors"; }
  train::TrainState last_state() const;  // the train_state of checkpoint.last
};

// Bit-for-bit equality of two name -> tensor maps, such as two checkpoints' parameters or
// extras (NaN-safe, -0 != +0); a Catch2 check per tensor.
void check_identical(const std::map<std::string, Tensor>& a, const std::map<std::string, Tensor>& b);

// Trains `config` to step `stop_at`, then --resume to its own end: the interrupted half of a
// resume-is-exact test.
void train_with_a_stop(const io::Config& config, int64_t stop_at);

// The message train::train fails with for `config`, or "" when it trains to the end.
std::string error_of_training(const io::Config& config, const train::TrainOptions& options = {});

}  // namespace attn::testing
