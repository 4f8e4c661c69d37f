#pragma once
// TrainState: everything besides parameters and Adam's moments that --resume needs to continue
// exactly where a run stopped. Stored as JSON in the last checkpoint's metadata.
#include <cstdint>
#include <limits>

#include <nlohmann/json.hpp>

#include "data/training_stream.h"
#include "io/checkpoint.h"

namespace attn::train {

struct TrainState {
  int64_t step = 0;             // steps taken, skipped ones included
  int64_t optimizer_steps = 0;  // Adam updates (step - skipped_steps)
  // The next batch to read. Checkpoints from before streaming data hold only an epoch: their
  // position has an empty `start`.
  data::StreamPosition data;
  double best_metric = std::numeric_limits<double>::quiet_NaN();  // NaN: no validation yet
  int64_t best_step = 0;
  int validations_without_improvement = 0;
  int nonfinite_in_a_row = 0;
  int64_t skipped_steps = 0;   // steps dropped for a non-finite loss or gradient
  int64_t target_tokens = 0;   // seen so far
  double elapsed_seconds = 0;  // training wall time, across resumes

  nlohmann::json to_json() const;
  static TrainState from_json(const nlohmann::json& json);
};

// The state stored under "train_state" in a last checkpoint's metadata. A missing or malformed
// one (not JSON, a missing field, a wrong type, a negative count) is an attn::Error naming the
// checkpoint.
TrainState train_state_of(const io::Checkpoint& checkpoint);

}  // namespace attn::train
