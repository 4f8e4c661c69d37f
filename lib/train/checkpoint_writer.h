#pragma once
// CheckpointWriter: the files a training run saves in its directory. checkpoint.last holds the
// weights, Adam's moments, the moving average (train.ema_decay) and the TrainState, for exact
// --resume; checkpoint.best the weights validated best; with train.keep_checkpoints, each save
// of checkpoint.last also writes checkpoint.step-STEP (the weights validation uses, no optimizer
// state) and keeps only the newest N. Every file carries the config, the vocabulary digests and
// the run's id (run::kRunIdKey; none for a resumed run from before run ids).
// Writes are atomic: a failed save is an error naming the file, and the previous one stays.
#include <string>

#include "core/parameter_store.h"
#include "io/checkpoint.h"
#include "io/config.h"
#include "optim/adam.h"
#include "optim/ema.h"
#include "run/run_files.h"
#include "train/train_state.h"

namespace attn::train {

class CheckpointWriter {
 public:
  CheckpointWriter(const io::Config& config, const run::RunPaths& paths, const run::VocabDigests& digests,
                   std::string run_id);

  // checkpoint.last (and the step checkpoint); `ema` null without a moving average.
  void save_last(const ParameterStore& parameters, optim::Adam& adam, optim::Ema* ema, const TrainState& state);
  // checkpoint.best: the parameters as they are (the caller swaps in the moving average).
  void save_best(const ParameterStore& parameters, int64_t step);
  // The checkpoint.last tensor that holds the moving average, for --resume.
  static const char* ema_tensor();

 private:
  io::CheckpointExtras run_metadata() const;
  void write(const std::string& path, const ParameterStore& parameters, const io::CheckpointExtras& extras,
             int64_t step);
  void save_step_checkpoint(const ParameterStore& parameters, optim::Ema* ema, int64_t step);

  run::RunPaths paths_;
  int keep_checkpoints_;
  std::string config_json_;
  std::string digests_json_;
  std::string run_id_;
};

}  // namespace attn::train
