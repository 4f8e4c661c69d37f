#pragma once
// TrainingSchedule: when the training loop logs, validates, saves and stops, from the config's
// train.log_every, valid_every, save_every, max_steps, max_epochs, max_time and patience. Pure:
// it reads only what it is given (steps taken, epoch, elapsed seconds), so it is testable
// without a model.
#include <cstdint>

#include "io/config.h"

namespace attn::train {

class TrainingSchedule {
 public:
  explicit TrainingSchedule(const io::TrainConfig& train) : train_(train) {}

  // A progress line after step `step` (from 1).
  bool log_at(int64_t step) const { return step % train_.log_every == 0; }
  // A validation after step `step`; a run ending elsewhere validates once more at its end.
  bool validate_at(int64_t step) const { return step % train_.valid_every == 0; }
  // checkpoint.last after step `step`: at every save_every, and whenever the run stops after it.
  bool save_at(int64_t step, bool stopping) const { return step % train_.save_every == 0 || stopping; }
  // max_steps, max_epochs or max_time reached (0: no limit); `epoch` counts from 1.
  bool limit_reached(int64_t step, int64_t epoch, double elapsed_seconds) const;
  // Training goes on after this many validations in a row without a better metric.
  bool patience_left(int validations_without_improvement) const;
  // Seconds until the first limit at `seconds_per_step`; infinite with no step or time limit.
  double eta_seconds(int64_t step, double seconds_per_step, double elapsed_seconds) const;

 private:
  io::TrainConfig train_;
};

}  // namespace attn::train
