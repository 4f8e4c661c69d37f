#include "train/train_state.h"

#include <cmath>
#include <limits>

#include "core/check.h"
#include "io/json_depth.h"

namespace attn::train {

namespace {

nlohmann::json position_to_json(const data::StreamPosition& position) {
  nlohmann::json start = nlohmann::json::array();
  for (const data::CorpusPosition& corpus : position.start)
    start.push_back({{"src_offset", corpus.reader.src_offset},
                     {"tgt_offset", corpus.reader.tgt_offset},
                     {"line", corpus.reader.line},
                     {"links_offset", corpus.reader.links_offset},
                     {"passes", corpus.passes}});
  return {{"window", position.window},
          {"epoch", position.epoch},
          {"batch_in_window", position.batch_in_window},
          {"start", start},
          {"pairs_seen", position.pairs_seen}};
}

}  // namespace

nlohmann::json TrainState::to_json() const {
  return {{"step", step},
          {"optimizer_steps", optimizer_steps},
          {"data", position_to_json(data)},
          {"best_metric", std::isnan(best_metric) ? nlohmann::json(nullptr) : nlohmann::json(best_metric)},
          {"best_step", best_step},
          {"validations_without_improvement", validations_without_improvement},
          {"nonfinite_in_a_row", nonfinite_in_a_row},
          {"skipped_steps", skipped_steps},
          {"target_tokens", target_tokens},
          {"elapsed_seconds", elapsed_seconds}};
}

namespace {

// A non-negative integer field, at most `max`. Checked by hand: get<int>() of 1e300 would be an
// undefined float-to-int conversion, and a checkpoint may be hostile.
uint64_t count_at(const nlohmann::json& json, const char* key, uint64_t max) {
  const nlohmann::json& value = json.at(key);
  bool valid = value.is_number_unsigned() || (value.is_number_integer() && value.get<int64_t>() >= 0);
  ATTN_CHECK(valid && value.get<uint64_t>() <= max, "train_state field \"", key, "\" must be an integer in [0, ", max,
             "]; got ", value.is_structured() ? std::string("an array or object") : value.dump());
  return value.get<uint64_t>();
}

int64_t count64_at(const nlohmann::json& json, const char* key) {
  return static_cast<int64_t>(count_at(json, key, std::numeric_limits<int64_t>::max()));
}

const nlohmann::json& list_at(const nlohmann::json& json, const char* key) {
  const nlohmann::json& value = json.at(key);
  ATTN_CHECK(value.is_array(), "train_state field \"", key, "\" must be a list");
  return value;
}

data::StreamPosition position_from_json(const nlohmann::json& json) {
  data::StreamPosition position;
  position.window = count64_at(json, "window");
  position.epoch = count64_at(json, "epoch");
  position.batch_in_window = count64_at(json, "batch_in_window");
  for (const nlohmann::json& corpus : list_at(json, "start")) {
    data::CorpusPosition at;
    at.reader.src_offset = count64_at(corpus, "src_offset");
    at.reader.tgt_offset = count64_at(corpus, "tgt_offset");
    at.reader.line = count64_at(corpus, "line");
    // The alignments file's offset (guided alignment); a checkpoint from before it has none.
    if (corpus.contains("links_offset")) at.reader.links_offset = count64_at(corpus, "links_offset");
    at.passes = count64_at(corpus, "passes");
    position.start.push_back(at);
  }
  for (const nlohmann::json& count : list_at(json, "pairs_seen")) {
    ATTN_CHECK(count.is_number_unsigned(), "train_state field \"pairs_seen\" must hold counts");
    position.pairs_seen.push_back(count.get<int64_t>());
  }
  return position;
}

int count32_at(const nlohmann::json& json, const char* key) {
  return static_cast<int>(count_at(json, key, std::numeric_limits<int>::max()));
}

double real_at(const nlohmann::json& json, const char* key) {
  const nlohmann::json& value = json.at(key);
  ATTN_CHECK(value.is_number(), "train_state field \"", key, "\" must be a number");
  return value.get<double>();
}

}  // namespace

TrainState TrainState::from_json(const nlohmann::json& json) {
  TrainState state;
  state.step = count64_at(json, "step");
  if (json.contains("data")) {
    state.data = position_from_json(json.at("data"));
  } else {  // before streaming data: an epoch of an in-memory batcher, no file offsets
    state.data.epoch = count64_at(json, "epoch");
    state.data.start.clear();
  }
  if (!json.at("best_metric").is_null()) state.best_metric = real_at(json, "best_metric");
  state.best_step = count64_at(json, "best_step");
  state.validations_without_improvement = count32_at(json, "validations_without_improvement");
  state.nonfinite_in_a_row = count32_at(json, "nonfinite_in_a_row");
  state.skipped_steps = count64_at(json, "skipped_steps");
  state.target_tokens = count64_at(json, "target_tokens");
  state.elapsed_seconds = real_at(json, "elapsed_seconds");
  // Older checkpoints lack the count; every step that was not skipped was an update.
  state.optimizer_steps =
      json.contains("optimizer_steps") ? count64_at(json, "optimizer_steps") : state.step - state.skipped_steps;
  return state;
}

TrainState train_state_of(const io::Checkpoint& checkpoint) {
  auto found = checkpoint.metadata.find("train_state");
  ATTN_CHECK(found != checkpoint.metadata.end(), checkpoint.path, " has no train_state to resume from");
  TrainState state;
  try {
    state = TrainState::from_json(nlohmann::json::parse(found->second, io::json_depth_limit("train_state")));
  } catch (const std::exception& error) {  // nlohmann's errors and ours alike
    throw Error(checkpoint.path + ": its train_state cannot be read: " + error.what());
  }
  ATTN_CHECK(state.optimizer_steps <= state.step && state.skipped_steps <= state.step, checkpoint.path,
             ": its train_state holds impossible counts: ", state.to_json().dump());
  return state;
}

}  // namespace attn::train
