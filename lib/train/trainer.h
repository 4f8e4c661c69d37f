#pragma once
// Trainer: the training loop of attn-train. Reads the corpus, trains (or reuses) the run's
// vocabulary, builds the model, and runs steps of
//   forward -> label-smoothed cross-entropy -> tape.backward -> clip -> Adam
// with gradient accumulation, logging, validation, best/last checkpoints, early stopping,
// limits on steps/epochs/time, SIGINT/SIGTERM handling and exact --resume. The run directory's
// rules (one trainer at a time, no run overwritten or continued with another vocabulary) are
// train/run_directory.h's.
//
// Faults: checkpoints are written atomically (io/atomic_file.h), so a run killed at any moment
// keeps its last complete checkpoint; a failed save (full disk, unwritable directory) is an
// error naming the file, and the previous checkpoint stays. A step whose loss or gradient norm
// is not finite is skipped (no update) and counted; train.max_nonfinite_steps of them in a row
// stop the run with an error, without saving over the last checkpoint.
#include <cstdint>
#include <functional>
#include <string>

#include "core/parameter_store.h"
#include "io/config.h"
#include "train/input_files.h"

namespace attn::train {

struct TrainOptions {
  bool resume = false;   // continue from OUTPUT_DIR/checkpoint.last.safetensors
  bool restart = false;  // move the run in OUTPUT_DIR aside and start over (not with resume)
  // For tests only (attn-train never sets it): called after the backward pass of step `step`
  // (from 1), before clipping and the update, with the summed gradients in place, so a test
  // can inject a NaN gradient without a config key that users could trip over.
  std::function<void(int64_t step, ParameterStore& parameters)> after_backward;
  // Training corpora up to this size are checked for aligned line counts before anything is
  // written; larger ones while they stream. Tests lower it to reach the streaming check.
  int64_t count_lines_up_to = kCountLinesUpToBytes;
};

// Trains as the config says; returns when a limit is reached, patience runs out or a stop
// signal arrives (after saving). Errors throw attn::Error; whether the run can start (--resume
// needs a run) and the data files the config names (train/input_files.h) are checked before
// any work, and before anything is written.
void train(const io::Config& config, const TrainOptions& options);

}  // namespace attn::train
