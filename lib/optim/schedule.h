#pragma once
// Learning-rate schedules. Steps count from 1 (the first optimizer update is step 1).
//
//   constant:     lr
//   inverse_sqrt: lr * step / warmup while step < warmup (linear from 0, fairseq), then
//                 lr * sqrt(warmup / step): the peak lr is reached at step == warmup.
//   noam:         lr * d_model^-0.5 * min(step^-0.5, step * warmup^-1.5) (Vaswani et al. 2017,
//                 with lr as the "factor"): peaks at step == warmup.
// warmup_steps == 0 means no warmup (treated as 1, which gives lr/sqrt(step) and
// lr * d_model^-0.5 / sqrt(step)).
#include <cstdint>

#include "core/choice.h"
#include "io/config.h"

namespace attn::optim {

struct ScheduleOptions {
  // train.schedule, learning_rate and warmup_steps' declared defaults (io/config.h).
  ScheduleType type = io::defaults<io::TrainConfig>().schedule;
  float learning_rate = float(io::defaults<io::TrainConfig>().learning_rate);
  int64_t warmup_steps = io::defaults<io::TrainConfig>().warmup_steps;
  // Used by noam only: the model's width (models::schedule_width), by default the default model's.
  int64_t d_model = io::defaults<io::TransformerConfig>().d_model;
};

float learning_rate_at(const ScheduleOptions& options, int64_t step);

}  // namespace attn::optim
