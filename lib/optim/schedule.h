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

namespace attn::optim {

struct ScheduleOptions {
  ScheduleType type = ScheduleType::inverse_sqrt;
  float learning_rate = 1e-3f;
  int64_t warmup_steps = 4000;
  int64_t d_model = 512;  // used by noam only
};

float learning_rate_at(const ScheduleOptions& options, int64_t step);

}  // namespace attn::optim
