// The trainer's answers to faults, in process: missing data files, an unwritable run directory,
// non-finite steps (through TrainOptions::after_backward, the test-only hook), and --resume
// reaching the very parameters of an uninterrupted run.
#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <limits>

#include <catch2/catch.hpp>

#include "bf16_support.h"
#include "data/data_fixtures.h"
#include "io/checkpoint.h"
#include "models/model_factory.h"
#include "ops/gemm.h"
#include "optim/ema.h"
#include "run/run_files.h"
#include "train/train_fixtures.h"
#include "train/trainer.h"

using namespace attn;
using attn::testing::check_identical;
using attn::testing::error_of_training;
using attn::testing::TinyRun;
using attn::testing::train_with_a_stop;
using nlohmann::json;
namespace fs = std::filesystem;

namespace {

// A hook that makes the gradients of the listed steps NaN (as an overflow would).
train::TrainOptions poison_steps(int64_t first, int64_t last) {
  train::TrainOptions options;
  options.after_backward = [first, last](int64_t step, ParameterStore& parameters) {
    if (step >= first && step <= last)
      parameters.parameters().front().tensor.grad().fill(std::numeric_limits<float>::quiet_NaN());
  };
  return options;
}

// Parameter values by name (std::vector equality: element-wise ==, so NaN never matches).
using NamedValues = std::map<std::string, std::vector<float>>;

NamedValues values_of(const io::Checkpoint& checkpoint) {
  NamedValues values;
  for (const auto& [name, tensor] : checkpoint.parameters) values[name] = tensor.to_vector();
  return values;
}

NamedValues values_of(const ParameterStore& store) {
  NamedValues values;
  for (const NamedParameter& parameter : store.parameters()) values[parameter.name] = parameter.tensor.to_vector();
  return values;
}

}  // namespace

TEST_CASE("training names a missing data file and its config key before writing anything", "[train][faults]") {
  TinyRun run;
  fs::remove_all(run.run_dir);
  SECTION("a missing file") {
    fs::remove(run.config.data.train_tgt);
    CHECK(error_of_training(run.config) ==
          "config key data.train_tgt: file '" + run.config.data.train_tgt + "' does not exist");
  }
  SECTION("a directory") {
    run.config.data.valid_src = run.dir.path().string();
    CHECK_THAT(error_of_training(run.config), Catch::StartsWith("config key data.valid_src: '") &&
                                                  Catch::EndsWith("' is a directory, not a text file"));
  }
  SECTION("an unset key") {
    run.config.data.valid_tgt = "";
    CHECK(error_of_training(run.config) == "config key data.valid_tgt is not set; training needs it");
  }
  CHECK_FALSE(fs::exists(run.run_dir));
}

TEST_CASE("training names an empty or blank data file and its config key before writing anything", "[train][faults]") {
  TinyRun run;
  fs::remove_all(run.run_dir);
  SECTION("an empty file") {
    attn::testing::write_file(run.config.data.train_src, "");
    CHECK(error_of_training(run.config) ==
          "config key data.train_src: file '" + run.config.data.train_src + "' is empty; training needs sentences");
  }
  SECTION("only blank lines") {
    attn::testing::write_file(run.config.data.valid_tgt, "\n  \n\r\n");
    CHECK(error_of_training(run.config) == "config key data.valid_tgt: file '" + run.config.data.valid_tgt +
                                               "' holds only blank lines; training needs sentences");
  }
  CHECK_FALSE(fs::exists(run.run_dir));
}

TEST_CASE("training names both files and their line counts when a pair differs in length - before writing anything",
          "[train][faults]") {
  TinyRun run;
  fs::remove_all(run.run_dir);
  SECTION("training pair") {
    attn::testing::write_file(run.config.data.train_tgt, attn::testing::synthetic_text(47, 22));
    CHECK(error_of_training(run.config) ==
          "config keys data.train_src and data.train_tgt: '" + run.config.data.train_src + "' has 48 lines but '" +
              run.config.data.train_tgt + "' has 47; the two sides must align line by line");
  }
  SECTION("validation pair") {
    attn::testing::write_file(run.config.data.valid_src, attn::testing::synthetic_text(7, 23));
    CHECK(error_of_training(run.config) ==
          "config keys data.valid_src and data.valid_tgt: '" + run.config.data.valid_src + "' has 7 lines but '" +
              run.config.data.valid_tgt + "' has 6; the two sides must align line by line");
  }
  CHECK_FALSE(fs::exists(run.run_dir));
}

TEST_CASE("a run directory that cannot be created is one clear error", "[train][faults]") {
  TinyRun run;
  attn::testing::write_file(run.dir.file("a_file"), "x");
  run.config.output_dir = run.dir.file("a_file") + "/run";
  CHECK_THAT(error_of_training(run.config), Catch::StartsWith("cannot create the run directory " +
                                                              run.config.output_dir + " (config key output_dir)"));
}

TEST_CASE("a non-finite gradient skips the step without an update - counts it and training goes on",
          "[train][faults]") {
  TinyRun run(json{{"max_steps", 6}});
  NamedValues before_step_3, before_step_4;
  train::TrainOptions options;
  options.after_backward = [&](int64_t step, ParameterStore& parameters) {
    if (step == 3) {
      before_step_3 = values_of(parameters);
      parameters.parameters().back().tensor.grad().fill(std::numeric_limits<float>::infinity());
    }
    if (step == 4) before_step_4 = values_of(parameters);
  };
  train::train(run.config, options);
  REQUIRE(!before_step_3.empty());
  CHECK(before_step_4 == before_step_3);  // step 3 changed nothing
  train::TrainState state = run.last_state();
  CHECK(state.step == 6);
  CHECK(state.skipped_steps == 1);
  CHECK(state.optimizer_steps == 5);
  CHECK(state.nonfinite_in_a_row == 0);
}

TEST_CASE("too many non-finite steps in a row stop the run and keep the last good checkpoint", "[train][faults]") {
  SECTION("an injected NaN from step 5 on") {
    TinyRun run({{"max_steps", 20}, {"save_every", 2}, {"max_nonfinite_steps", 3}});
    NamedValues good;
    train::TrainOptions options = poison_steps(5, 1000);
    auto poison = options.after_backward;
    options.after_backward = [&](int64_t step, ParameterStore& parameters) {
      if (step == 5) good = values_of(parameters);  // after step 4's update
      poison(step, parameters);
    };
    CHECK(error_of_training(run.config, options) ==
          "step 7: 3 steps in a row had a non-finite loss or gradient (train.max_nonfinite_steps is 3); stopping. "
          "The last good checkpoint is " +
              run.last_checkpoint() + ". Try a lower train.learning_rate or train.clip_norm.");
    // Step 6 was saved (skipped, so with step 4's parameters); nothing was written after it.
    train::TrainState state = run.last_state();
    CHECK(state.step == 6);
    CHECK(state.skipped_steps == 2);
    CHECK(state.optimizer_steps == 4);
    CHECK(values_of(io::load_checkpoint(run.last_checkpoint())) == good);
    CHECK_FALSE(fs::exists(run.last_checkpoint() + ".tmp"));
  }
  SECTION("a huge learning rate") {
    TinyRun run({{"max_steps", 30}, {"learning_rate", 1e30}, {"warmup_steps", 1}, {"max_nonfinite_steps", 2}});
    CHECK_THAT(error_of_training(run.config), Catch::Contains("2 steps in a row had a non-finite loss or gradient"));
  }
}

TEST_CASE("a resumed run (--resume) reaches the parameters and optimizer state of an uninterrupted one bit for bit",
          "[train][faults][resume]") {
  // One thread, dropout on (model and attention), a skipped step before the interruption.
  // The corpus (48 pairs) fits one window, or streams through windows of 1, 2, 4, 8 and then 16
  // pairs, so that the run stops in the middle of the file and of a window.
  // With train.ema_decay, the moving average of the weights is one more extra tensor.
  const int64_t buffer_pairs = GENERATE(int64_t(1000000), int64_t(16));
  const double ema_decay = GENERATE(0.0, 0.75);
  // Subword sampling and concatenated pairs: training-only draws, which resume must repeat.
  const bool augment = GENERATE(false, true);
  INFO("data.buffer_pairs " << buffer_pairs << ", train.ema_decay " << ema_decay << ", augment " << augment);
  const json train = {{"max_steps", 12}, {"save_every", 3}, {"ema_decay", ema_decay}};
  TinyRun straight(train), interrupted(train);
  for (io::Config* config : {&straight.config, &interrupted.config}) {
    config->data.buffer_pairs = buffer_pairs;
    config->vocab.sampling_alpha = augment ? 0.2 : 0.0;
    config->data.concat_prob = augment ? 0.5 : 0.0;
  }
  train::train(straight.config, poison_steps(4, 4));

  io::Config first_half = interrupted.config;
  first_half.train.max_steps = 6;
  train::train(first_half, poison_steps(4, 4));
  CHECK(interrupted.last_state().step == 6);
  train::TrainOptions resume = poison_steps(4, 4);
  resume.resume = true;
  train::train(interrupted.config, resume);

  io::Checkpoint a = io::load_checkpoint(straight.last_checkpoint());
  io::Checkpoint b = io::load_checkpoint(interrupted.last_checkpoint());
  check_identical(a.parameters, b.parameters);
  check_identical(a.extras, b.extras);  // Adam's moments, and the moving average when on
  CHECK(b.extras.count("ema") == (ema_decay > 0 ? 1 : 0));
  train::TrainState sa = straight.last_state(), sb = interrupted.last_state();
  CHECK(sa.step == 12);
  CHECK(sb.step == 12);
  CHECK(sb.optimizer_steps == sa.optimizer_steps);
  CHECK(sb.skipped_steps == 1);
  CHECK(sb.to_json()["data"] == sa.to_json()["data"]);
  CHECK(sb.target_tokens == sa.target_tokens);
  // (best_metric and best_step differ by design: a session validates when it ends.)
}

TEST_CASE("bf16 training: --resume is bit for bit and validating the moving average midway changes nothing",
          "[train][resume][bf16]") {
  ATTN_SKIP_UNLESS_BF16_MATMUL();
  // The bf16 copies of the weights must follow every change of the f32 masters: the update, a
  // resume, and the swap to the moving average and back around a validation.
  const json train = {{"max_steps", 9}, {"save_every", 3}, {"ema_decay", 0.75}, {"precision", "bf16"}};
  TinyRun straight(train), interrupted(train), validated(train);
  validated.config.train.valid_every = 2;
  train::train(straight.config, {});
  train::train(validated.config, {});
  train_with_a_stop(interrupted.config, 5);

  io::Checkpoint a = io::load_checkpoint(straight.last_checkpoint());
  for (const TinyRun* other : {&interrupted, &validated}) {
    io::Checkpoint b = io::load_checkpoint(other->last_checkpoint());
    check_identical(a.parameters, b.parameters);
    check_identical(a.extras, b.extras);
  }
}

TEST_CASE("a corpus found misaligned while streaming stops the run with a checkpoint of every step so far",
          "[train][faults][stream]") {
  // Windows of 1, 2, 4, 8 and 16 pairs train lines 1-31; the sixth window meets the short file.
  TinyRun run({{"max_steps", 40}, {"save_every", 1000}});
  run.config.data.buffer_pairs = 16;
  const std::string& src = run.config.data.train_src;
  const std::string& tgt = run.config.data.train_tgt;
  attn::testing::write_file(tgt, attn::testing::synthetic_text(40, 22));  // the first 40 of its 48 lines
  train::TrainOptions options;
  options.count_lines_up_to = 0;  // no count up front: the stream finds it
  const std::string error = error_of_training(run.config, options);
  CHECK_THAT(error, Catch::Contains("the training corpus files differ in length: '" + tgt +
                                    "' ends after line 40 but '" + src + "' has a line 41") &&
                        Catch::Contains("holds every step so far") && Catch::Contains("--resume"));
  const train::TrainState stopped = run.last_state();
  CHECK(stopped.step > 0);
  CHECK_THAT(error, Catch::StartsWith("step " + std::to_string(stopped.step) + ": "));

  // Fixed, the run continues from there to its end.
  attn::testing::write_file(tgt, attn::testing::synthetic_text(48, 22));
  options.resume = true;
  train::train(run.config, options);
  CHECK(run.last_state().step == 40);
}

TEST_CASE("data.train trains on weighted corpora and logs the pairs seen per corpus", "[train][stream]") {
  TinyRun run(json{{"max_steps", 16}});
  const std::string b_src = run.dir.file("b.src"), b_tgt = run.dir.file("b.tgt");
  attn::testing::write_file(b_src, attn::testing::synthetic_text(30, 31));
  attn::testing::write_file(b_tgt, attn::testing::synthetic_text(30, 32));
  auto corpus = [](const std::string& src, const std::string& tgt, double weight) {
    io::CorpusConfig corpus;
    corpus.src = src, corpus.tgt = tgt, corpus.weight = weight;
    return corpus;
  };
  run.config.data.train = {corpus(run.config.data.train_src, run.config.data.train_tgt, 3.0),
                           corpus(b_src, b_tgt, 1.0)};
  run.config.data.train_src = run.config.data.train_tgt = "";
  train::train(run.config, {});
  json last;
  std::ifstream log(run.run_dir + "/train.log.jsonl");
  for (std::string line; std::getline(log, line);)
    if (json record = json::parse(line); record.at("type") == "train") last = record;
  const std::vector<int64_t> seen = last.at("pairs_seen").get<std::vector<int64_t>>();
  REQUIRE(seen.size() == 2);
  CHECK(seen[1] > 0);
  CHECK(seen[0] > 2 * seen[1]);  // 3:1 in expectation
  CHECK(run.last_state().data.pairs_seen == seen);
}

TEST_CASE("train.precision auto: the run logs what it chose and why and config.json keeps auto", "[train][precision]") {
  TinyRun run(json{{"max_steps", 2}, {"precision", "auto"}});
  train::train(run.config, {});
  json chosen;
  std::ifstream log(run.run_dir + "/train.log.jsonl");
  for (std::string line; std::getline(log, line);)
    if (json record = json::parse(line); record.at("type") == "precision") chosen = record;
  REQUIRE(chosen.is_object());
  CHECK(chosen.at("requested") == "auto");
  const std::string precision = chosen.at("precision");
  CHECK((precision == "f32" || precision == "bf16"));
  CHECK_THAT(chosen.at("reason").get<std::string>(), Catch::StartsWith("auto: " + precision));
  CHECK(io::load_config(run.run_dir + "/config.json").train.precision == Precision::automatic);
}

TEST_CASE("a train_state from before streaming data keeps its epoch and has no file offsets", "[train][resume]") {
  const json old = {{"step", 900},
                    {"optimizer_steps", 900},
                    {"epoch", 3},
                    {"batch_in_epoch", 12},
                    {"best_metric", nullptr},
                    {"best_step", 0},
                    {"validations_without_improvement", 0},
                    {"nonfinite_in_a_row", 0},
                    {"skipped_steps", 0},
                    {"target_tokens", 5000},
                    {"elapsed_seconds", 10.0}};
  const train::TrainState state = train::TrainState::from_json(old);
  CHECK(state.data.epoch == 3);
  CHECK(state.data.start.empty());  // the trainer then starts epoch 3 from the files' beginning
  const train::TrainState again = train::TrainState::from_json(state.to_json());
  CHECK(again.to_json() == state.to_json());
}

TEST_CASE("with train.ema_decay checkpoint.best holds the moving average and checkpoint.last the weights and it",
          "[train][ema]") {
  // One validation (step 4): its checkpoint.best and the final checkpoint.last are of one step.
  TinyRun run({{"max_steps", 4}, {"valid_every", 4}, {"save_every", 1000}, {"ema_decay", 0.5}});
  train::train(run.config, {});
  io::Checkpoint last = io::load_checkpoint(run.last_checkpoint());
  io::Checkpoint best = io::load_checkpoint(run.best_checkpoint());
  REQUIRE(last.extras.count("ema") == 1);
  CHECK(best.extras.empty());
  CHECK(values_of(best) != values_of(last));  // the average trails the weights

  // The weights of checkpoint.last with its average swapped in are checkpoint.best's.
  int64_t vocab_size = 0;  // the tiny joint vocabulary's, the rows of the (shared) embedding
  for (const auto& [name, tensor] : last.parameters)
    if (name.find("embedding") != std::string::npos) vocab_size = tensor.dim(0);
  auto model = models::make_model(run.config, {vocab_size, vocab_size});
  io::load_parameters(last, model->parameters());
  optim::Ema ema(model->parameters(), 0.5f);
  io::load_extra(last, "ema", ema.average());
  ema.swap_with_store();
  CHECK(values_of(model->parameters()) == values_of(best));
}

TEST_CASE("train.keep_checkpoints keeps the newest N step checkpoints - the parameters without optimizer state",
          "[train][average]") {
  TinyRun run({{"max_steps", 10}, {"save_every", 2}, {"keep_checkpoints", 3}, {"valid_every", 1000}});
  train::train(run.config, {});
  std::vector<std::string> names;
  for (const std::string& path : run::step_checkpoints(run.run_dir)) names.push_back(fs::path(path).filename());
  CHECK(names == std::vector<std::string>{"checkpoint.step-6.safetensors", "checkpoint.step-8.safetensors",
                                          "checkpoint.step-10.safetensors"});
  io::Checkpoint step10 = io::load_checkpoint(run.run_dir + "/checkpoint.step-10.safetensors");
  CHECK(step10.extras.empty());
  CHECK(step10.metadata.count(run::kVocabDigestsKey) == 1);
  CHECK(values_of(step10) == values_of(io::load_checkpoint(run.last_checkpoint())));
}
