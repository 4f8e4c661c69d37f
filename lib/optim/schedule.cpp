#include "optim/schedule.h"

#include <algorithm>
#include <cmath>

#include "core/check.h"

namespace attn::optim {

float learning_rate_at(const ScheduleOptions& options, int64_t step) {
  ATTN_CHECK(step >= 1, "learning-rate schedule steps count from 1, got step ", step);
  ATTN_CHECK(options.warmup_steps >= 0, "warmup_steps must be >= 0, got ", options.warmup_steps);
  const double lr = options.learning_rate;
  const double t = static_cast<double>(step);
  const double warmup = static_cast<double>(std::max<int64_t>(options.warmup_steps, 1));
  switch (options.type) {
    case ScheduleType::constant:
      return options.learning_rate;
    case ScheduleType::inverse_sqrt:
      return static_cast<float>(t < warmup ? lr * t / warmup : lr * std::sqrt(warmup / t));
    case ScheduleType::noam:
      ATTN_CHECK(options.d_model > 0, "the noam schedule needs d_model > 0, got ", options.d_model);
      return static_cast<float>(lr / std::sqrt(double(options.d_model)) *
                                std::min(1.0 / std::sqrt(t), t * std::pow(warmup, -1.5)));
  }
  ATTN_CHECK(false, "unknown schedule type ", static_cast<int>(options.type));
  return 0.f;
}

}  // namespace attn::optim
