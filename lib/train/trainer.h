#pragma once
// Trainer: the training loop of attn-train. Reads the corpus, trains (or reuses) the run's
// vocabulary, builds the model, and runs steps of
//   forward -> label-smoothed cross-entropy -> tape.backward -> clip -> Adam
// with gradient accumulation, logging, validation, best/last checkpoints, early stopping,
// limits on steps/epochs/time, SIGINT/SIGTERM handling and exact --resume.
#include <memory>
#include <string>

#include "io/config.h"

namespace attn::train {

struct TrainOptions {
  bool resume = false;  // continue from OUTPUT_DIR/checkpoint.last.safetensors
};

// Trains as the config says; returns when a limit is reached, patience runs out or a stop
// signal arrives (after saving). Errors throw attn::Error.
void train(const io::Config& config, const TrainOptions& options);

}  // namespace attn::train
