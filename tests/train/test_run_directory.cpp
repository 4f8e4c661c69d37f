// load_run (attn-translate's way into a run directory) on broken runs: one clear error each.
#include <filesystem>
#include <fstream>
#include <functional>

#include <catch2/catch.hpp>

#include "data/data_fixtures.h"
#include "train/run_directory.h"
#include "train/train_fixtures.h"
#include "train/trainer.h"

using namespace attn;
using attn::testing::TinyRun;
using nlohmann::json;
namespace fs = std::filesystem;

namespace {

std::string error_of_loading(const std::string& dir) {
  try {
    train::load_run(dir);
  } catch (const Error& error) {
    return error.what();
  }
  return "";
}

const json kTwoSteps = {{"max_steps", 2}, {"save_every", 2}};

// Trains two steps, then removes the best checkpoint, so that load_run takes checkpoint.last.
void train_two_steps(const TinyRun& run) {
  train::train(run.config, {});
  fs::remove(run.best_checkpoint());
}

void edit_config(const TinyRun& run, const std::function<void(json&)>& edit) {
  const std::string path = run.run_dir + "/config.json";
  json config = json::parse(std::ifstream(path));
  edit(config);
  std::ofstream(path) << config.dump(2);
}

}  // namespace

TEST_CASE("load_run reads a trained run", "[train][run_directory]") {
  TinyRun run(kTwoSteps);
  train_two_steps(run);
  train::LoadedRun loaded = train::load_run(run.run_dir);
  CHECK(loaded.checkpoint == run.last_checkpoint());
  CHECK(loaded.model->family() == "transformer");
}

TEST_CASE("load_run names the tensors and shapes when the checkpoint does not fit the config",
          "[train][run_directory][faults]") {
  TinyRun run(kTwoSteps);
  train_two_steps(run);
  edit_config(run, [](json& config) { config["model"]["transformer"]["ffn_dim"] = 24; });
  std::string error = error_of_loading(run.run_dir);
  CHECK_THAT(error, Catch::StartsWith(run.last_checkpoint() +
                                      ": parameter \"encoder.layers.0.ffn.fc1.weight\" has shape (32, 16) in the "
                                      "checkpoint but (24, 16) in the model; "));
  CHECK_THAT(error, Catch::Contains("\"decoder.layers.0.ffn.fc1.weight\" has shape (32, 16)"));
  CHECK_THAT(error, Catch::EndsWith("; and 1 more"));  // decoder.layers.0.ffn.fc2.weight
}

TEST_CASE("load_run reports a truncated or foreign checkpoint - naming it", "[train][run_directory][faults]") {
  TinyRun run(kTwoSteps);
  train_two_steps(run);
  const auto size = fs::file_size(run.last_checkpoint());
  SECTION("truncated") {
    fs::resize_file(run.last_checkpoint(), size - 100);
    CHECK_THAT(error_of_loading(run.run_dir),
               Catch::StartsWith(run.last_checkpoint() + ": tensor ") && Catch::Contains("lie outside the data"));
  }
  SECTION("not a safetensors file at all") {
    attn::testing::write_file(run.last_checkpoint(), "PK\x03\x04 this is a zip archive, not a checkpoint");
    CHECK_THAT(error_of_loading(run.run_dir),
               Catch::StartsWith(run.last_checkpoint() + ": header length ") && Catch::Contains("runs past the end"));
  }
}

TEST_CASE("load_run reports a broken config.json or vocabulary - naming the file", "[train][run_directory][faults]") {
  TinyRun run(kTwoSteps);
  train_two_steps(run);
  SECTION("malformed config.json") {
    attn::testing::write_file(run.run_dir + "/config.json", "{\n  \"model\": {\n");
    CHECK_THAT(error_of_loading(run.run_dir), Catch::StartsWith(run.run_dir + "/config.json:3:1: "));
  }
  SECTION("a config.json with an impossible model") {
    edit_config(run, [](json& config) { config["model"]["transformer"]["heads"] = 3; });
    CHECK(error_of_loading(run.run_dir) == run.run_dir +
                                               "/config.json: model.transformer.d_model (16) must be divisible by "
                                               "model.transformer.heads (3)");
  }
  SECTION("a truncated vocabulary") {
    attn::testing::write_file(run.run_dir + "/spm.model", "\x0a\x05trunc");
    CHECK_THAT(error_of_loading(run.run_dir),
               Catch::StartsWith("cannot load SentencePiece model '" + run.run_dir + "/spm.model'"));
  }
  SECTION("no checkpoint") {
    fs::remove(run.last_checkpoint());
    CHECK_THAT(error_of_loading(run.run_dir), Catch::StartsWith(run.run_dir + " has no checkpoint yet"));
  }
}
