#include <cmath>

#include <catch2/catch.hpp>

#include "train/training_schedule.h"

using attn::io::TrainConfig;
using attn::train::TrainingSchedule;

TEST_CASE("the schedule logs - validates and saves at multiples of their intervals", "[train][training_schedule]") {
  TrainConfig config;
  config.log_every = 10;
  config.valid_every = 25;
  config.save_every = 50;
  const TrainingSchedule schedule(config);
  CHECK(schedule.log_at(10));
  CHECK(schedule.log_at(30));
  CHECK_FALSE(schedule.log_at(15));
  CHECK(schedule.validate_at(25));
  CHECK_FALSE(schedule.validate_at(30));
  CHECK(schedule.save_at(100, false));
  CHECK_FALSE(schedule.save_at(75, false));
  CHECK(schedule.save_at(77, true));  // the last step always saves
}

TEST_CASE("the schedule stops at max_steps - after max_epochs and at max_time - and never with no limit",
          "[train][training_schedule]") {
  TrainConfig config;
  CHECK_FALSE(TrainingSchedule(config).limit_reached(1000000, 1000, 1e9));
  config.max_steps = 100;
  CHECK_FALSE(TrainingSchedule(config).limit_reached(99, 1, 0));
  CHECK(TrainingSchedule(config).limit_reached(100, 1, 0));
  config = TrainConfig{};
  config.max_epochs = 2;
  CHECK_FALSE(TrainingSchedule(config).limit_reached(5, 2, 0));
  CHECK(TrainingSchedule(config).limit_reached(5, 3, 0));
  config = TrainConfig{};
  config.max_time.seconds = 60;
  CHECK_FALSE(TrainingSchedule(config).limit_reached(5, 1, 59.5));
  CHECK(TrainingSchedule(config).limit_reached(5, 1, 60));
}

TEST_CASE("the schedule's patience runs out after that many validations without improvement",
          "[train][training_schedule]") {
  TrainConfig config;
  CHECK(TrainingSchedule(config).patience_left(1000));  // patience 0: never
  config.patience = 3;
  CHECK(TrainingSchedule(config).patience_left(2));
  CHECK_FALSE(TrainingSchedule(config).patience_left(3));
}

TEST_CASE("the schedule's ETA is the nearer of the step and time limits", "[train][training_schedule]") {
  TrainConfig config;
  CHECK(std::isinf(TrainingSchedule(config).eta_seconds(10, 1.0, 5)));
  config.max_steps = 100;
  CHECK(TrainingSchedule(config).eta_seconds(10, 2.0, 5) == 180.0);
  config.max_time.seconds = 50;
  CHECK(TrainingSchedule(config).eta_seconds(10, 2.0, 5) == 45.0);
}
