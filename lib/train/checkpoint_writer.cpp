#include "train/checkpoint_writer.h"

#include <filesystem>
#include <fmt/format.h>

#include "core/check.h"
#include "train/ema_weights.h"

namespace attn::train {

namespace {

namespace fs = std::filesystem;

// The checkpoint.last tensor that holds the moving average of the weights (train.ema_decay).
constexpr const char* kEmaTensor = "ema";

}  // namespace

const char* CheckpointWriter::ema_tensor() { return kEmaTensor; }

CheckpointWriter::CheckpointWriter(const io::Config& config, const run::RunPaths& paths,
                                   const run::VocabDigests& digests, std::string run_id)
    : paths_(paths),
      keep_checkpoints_(config.train.keep_checkpoints),
      config_json_(io::config_to_json(config).dump()),
      digests_json_(run::digests_to_json(digests)),
      run_id_(std::move(run_id)) {}

io::CheckpointExtras CheckpointWriter::run_metadata() const {
  io::CheckpointExtras extras;
  extras.metadata["config"] = config_json_;
  extras.metadata[run::kVocabDigestsKey] = digests_json_;
  if (!run_id_.empty()) extras.metadata[run::kRunIdKey] = run_id_;
  return extras;
}

void CheckpointWriter::save_last(const ParameterStore& parameters, optim::Adam& adam, optim::Ema* ema,
                                 const TrainState& state) {
  io::CheckpointExtras extras = run_metadata();
  extras.metadata["train_state"] = state.to_json().dump();
  extras.tensors["optimizer.m"] = adam.first_moment();
  extras.tensors["optimizer.v"] = adam.second_moment();
  if (ema) extras.tensors[kEmaTensor] = ema->average();
  write(paths_.last_checkpoint, parameters, extras, state.step);
  if (keep_checkpoints_ > 0) save_step_checkpoint(parameters, ema, state.step);
}

void CheckpointWriter::save_best(const ParameterStore& parameters, int64_t step) {
  write(paths_.best_checkpoint, parameters, run_metadata(), step);
}

void CheckpointWriter::write(const std::string& path, const ParameterStore& parameters,
                             const io::CheckpointExtras& extras, int64_t step) {
  try {
    io::save_checkpoint(path, parameters, extras);
  } catch (const Error& error) {
    // A full disk or an unwritable directory: the write was atomic, so the old file is intact.
    throw Error(fmt::format(
        "step {}: saving the checkpoint failed: {}. {}", step, error.what(),
        fs::exists(path) ? "The previous " + path + " is unchanged." : std::string("No checkpoint was saved.")));
  }
}

// checkpoint.step-STEP.safetensors beside checkpoint.last: the weights validation uses (the
// moving average when on), without optimizer state; then only the newest keep_checkpoints stay.
void CheckpointWriter::save_step_checkpoint(const ParameterStore& parameters, optim::Ema* ema, int64_t step) {
  {
    EmaWeights ema_weights(ema);
    io::save_checkpoint(run::step_checkpoint_path(paths_.dir, step), parameters, run_metadata());
  }
  std::vector<std::string> kept = run::step_checkpoints(paths_.dir);
  const size_t keep = size_t(keep_checkpoints_);
  for (size_t i = 0; i + keep < kept.size(); ++i) fs::remove(kept[i]);
}

}  // namespace attn::train
