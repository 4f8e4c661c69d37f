#include <cmath>

#include <catch2/catch.hpp>

#include "optim/schedule.h"

using namespace attn;
using optim::learning_rate_at;

TEST_CASE("inverse_sqrt warms up linearly then decays as 1/sqrt(step)", "[optim][schedule]") {
  optim::ScheduleOptions options{ScheduleType::inverse_sqrt, 1e-3f, 4000, 512};
  CHECK(learning_rate_at(options, 1) == Approx(1e-3 / 4000));
  CHECK(learning_rate_at(options, 2000) == Approx(5e-4));
  CHECK(learning_rate_at(options, 4000) == Approx(1e-3));
  CHECK(learning_rate_at(options, 16000) == Approx(5e-4));
  options.warmup_steps = 0;  // no warmup: lr / sqrt(step)
  CHECK(learning_rate_at(options, 1) == Approx(1e-3));
  CHECK(learning_rate_at(options, 100) == Approx(1e-4));
}

TEST_CASE("noam matches Vaswani et al.", "[optim][schedule]") {
  optim::ScheduleOptions options{ScheduleType::noam, 1.f, 4000, 512};
  CHECK(learning_rate_at(options, 4000) == Approx(std::pow(512.0, -0.5) * std::pow(4000.0, -0.5)));
  CHECK(learning_rate_at(options, 1000) == Approx(std::pow(512.0, -0.5) * 1000 * std::pow(4000.0, -1.5)));
  CHECK(learning_rate_at(options, 16000) == Approx(std::pow(512.0, -0.5) * std::pow(16000.0, -0.5)));
  options.learning_rate = 2.f;  // the factor scales everything
  CHECK(learning_rate_at(options, 4000) == Approx(2 * std::pow(512.0, -0.5) * std::pow(4000.0, -0.5)));
}

TEST_CASE("constant schedule ignores the step", "[optim][schedule]") {
  optim::ScheduleOptions options{ScheduleType::constant, 3e-4f, 4000, 512};
  CHECK(learning_rate_at(options, 1) == 3e-4f);
  CHECK(learning_rate_at(options, 123456) == 3e-4f);
}

TEST_CASE("schedule steps count from 1", "[optim][schedule]") {
  CHECK_THROWS_WITH(learning_rate_at({}, 0), Catch::Contains("from 1"));
}
