#include <catch2/catch.hpp>

#include "core/parameter_store.h"
#include "io/checkpoint.h"
#include "optim/adam.h"
#include "run/run_files.h"
#include "temp_dir.h"
#include "train/checkpoint_writer.h"
#include "train/train_state.h"

using namespace attn;
using attn::testing::TempDir;
using attn::train::CheckpointWriter;

namespace {

void build(ParameterStore& store) {
  store.add("encoder.embedding", {5, 4}, init::normal(1.f));
  store.add("decoder.weight", {3, 4}, init::xavier_uniform());
  store.finalize();
}

}  // namespace

TEST_CASE("checkpoint.last holds the optimizer state and TrainState - checkpoint.best only the weights",
          "[train][checkpoint_writer]") {
  TempDir dir;
  io::Config config;
  const run::RunPaths paths = run::run_paths(dir.path().string(), true);
  ParameterStore parameters(1);
  build(parameters);
  optim::Adam adam(parameters);
  train::TrainState state;
  state.step = 7;
  const std::string run_id(32, 'c');
  CheckpointWriter writer(config, paths, {{"spm.model", "abc"}}, run_id);
  writer.save_last(parameters, adam, nullptr, state);
  writer.save_best(parameters, state.step);

  io::Checkpoint last = io::load_checkpoint(paths.last_checkpoint);
  CHECK(train::train_state_of(last).step == 7);
  CHECK(last.extras.count("optimizer.m") == 1);
  CHECK(last.extras.count(CheckpointWriter::ema_tensor()) == 0);
  CHECK(last.metadata.at(run::kVocabDigestsKey) == run::digests_to_json({{"spm.model", "abc"}}));
  io::Checkpoint best = io::load_checkpoint(paths.best_checkpoint);
  CHECK(best.extras.empty());
  CHECK(best.metadata.count("train_state") == 0);
  CHECK(best.metadata.at("config") == last.metadata.at("config"));
  CHECK(last.metadata.at(run::kRunIdKey) == run_id);
  CHECK(best.metadata.at(run::kRunIdKey) == run_id);
  CHECK(run::step_checkpoints(paths.dir).empty());  // train.keep_checkpoints 0
}

TEST_CASE("a failed save with no previous checkpoint says that none was saved", "[train][checkpoint_writer][faults]") {
  TempDir dir;
  io::Config config;
  const run::RunPaths paths = run::run_paths(dir.file("missing"), true);
  ParameterStore parameters(1);
  build(parameters);
  CheckpointWriter writer(config, paths, {}, "");
  CHECK_THROWS_WITH(writer.save_best(parameters, 3), Catch::StartsWith("step 3: saving the checkpoint failed: ") &&
                                                         Catch::EndsWith("No checkpoint was saved."));
}
