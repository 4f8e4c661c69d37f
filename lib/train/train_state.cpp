#include "train/train_state.h"

#include <cmath>

namespace attn::train {

nlohmann::json TrainState::to_json() const {
  return {{"step", step},
          {"epoch", batcher.epoch},
          {"batch_in_epoch", batcher.batch_in_epoch},
          {"dropout_rng_counter", dropout_rng_counter},
          {"best_metric", std::isnan(best_metric) ? nlohmann::json(nullptr) : nlohmann::json(best_metric)},
          {"best_step", best_step},
          {"validations_without_improvement", validations_without_improvement},
          {"nonfinite_in_a_row", nonfinite_in_a_row},
          {"skipped_steps", skipped_steps},
          {"target_tokens", target_tokens},
          {"elapsed_seconds", elapsed_seconds}};
}

TrainState TrainState::from_json(const nlohmann::json& json) {
  TrainState state;
  state.step = json.at("step").get<int64_t>();
  state.batcher.epoch = json.at("epoch").get<int64_t>();
  state.batcher.batch_in_epoch = json.at("batch_in_epoch").get<int64_t>();
  state.dropout_rng_counter = json.at("dropout_rng_counter").get<uint64_t>();
  if (!json.at("best_metric").is_null()) state.best_metric = json.at("best_metric").get<double>();
  state.best_step = json.at("best_step").get<int64_t>();
  state.validations_without_improvement = json.at("validations_without_improvement").get<int>();
  state.nonfinite_in_a_row = json.at("nonfinite_in_a_row").get<int>();
  state.skipped_steps = json.at("skipped_steps").get<int64_t>();
  state.target_tokens = json.at("target_tokens").get<int64_t>();
  state.elapsed_seconds = json.at("elapsed_seconds").get<double>();
  return state;
}

}  // namespace attn::train
