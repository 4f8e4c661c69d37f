#include "train/training_schedule.h"

#include <algorithm>
#include <limits>

namespace attn::train {

bool TrainingSchedule::limit_reached(int64_t step, int64_t epoch, double elapsed_seconds) const {
  if (train_.max_steps > 0 && step >= train_.max_steps) return true;
  if (train_.max_epochs > 0 && epoch > train_.max_epochs) return true;
  return train_.max_time.seconds > 0 && elapsed_seconds >= train_.max_time.seconds;
}

bool TrainingSchedule::patience_left(int validations_without_improvement) const {
  return train_.patience == 0 || validations_without_improvement < train_.patience;
}

double TrainingSchedule::eta_seconds(int64_t step, double seconds_per_step, double elapsed_seconds) const {
  double eta = std::numeric_limits<double>::infinity();
  if (train_.max_steps > 0) eta = (train_.max_steps - step) * seconds_per_step;
  if (train_.max_time.seconds > 0) eta = std::min(eta, train_.max_time.seconds - elapsed_seconds);
  return eta;
}

}  // namespace attn::train
