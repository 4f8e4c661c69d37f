// load_run (attn-translate's way into a run directory) on broken runs: one clear error each;
// and the rules that keep a run directory from being damaged: the lock, no run overwritten or
// continued without its checkpoint, --restart, the vocabulary's record.
#include <algorithm>
#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <unistd.h>

#include <catch2/catch.hpp>

#include "data/data_fixtures.h"
#include "io/checksum.h"
#include "io/file_lock.h"
#include "io/safetensors.h"
#include "run/average.h"
#include "run/load_run.h"
#include "run/run_files.h"
#include "train/run_directory.h"
#include "train/train_fixtures.h"
#include "train/trainer.h"

using namespace attn;
using attn::testing::error_of_training;
using attn::testing::TinyRun;
using nlohmann::json;
namespace fs = std::filesystem;

namespace {

std::string error_of_loading(const std::string& dir) {
  try {
    run::load_run(dir);
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

TEST_CASE("run::load_run reads a trained run", "[train][run_directory]") {
  TinyRun run(kTwoSteps);
  train_two_steps(run);
  run::LoadedRun loaded = run::load_run(run.run_dir);
  CHECK(loaded.checkpoint == run.last_checkpoint());
  CHECK(loaded.model->family() == "transformer");
}

TEST_CASE("run::load_run names the tensors and shapes when the checkpoint does not fit the config",
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

TEST_CASE("run::load_run refuses a checkpoint trained with other positions - whose parameters look the same",
          "[train][run_directory][faults]") {
  TinyRun run(kTwoSteps);
  train_two_steps(run);  // sinusoidal
  edit_config(run, [](json& config) { config["model"]["transformer"]["positions"] = "rotary"; });
  CHECK(error_of_loading(run.run_dir) ==
        run.last_checkpoint() +
            " was trained with model.transformer.positions \"sinusoidal\" but the config has \"rotary\": its "
            "parameters mean something else under another value; set model.transformer.positions to \"sinusoidal\"");
  // Learned positions have a table the checkpoint lacks: the same refusal, before the tensors.
  edit_config(run, [](json& config) { config["model"]["transformer"]["positions"] = "learned"; });
  CHECK_THAT(error_of_loading(run.run_dir), Catch::Contains("set model.transformer.positions to \"sinusoidal\""));
}

TEST_CASE("run::load_run reports a truncated or foreign checkpoint - naming it", "[train][run_directory][faults]") {
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

TEST_CASE("run::load_run reports a broken config.json or vocabulary - naming the file",
          "[train][run_directory][faults]") {
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

// ---- the run directory's safety rules (train/run_directory.h) -------------------------------

namespace {

train::TrainOptions resume_option() {
  train::TrainOptions options;
  options.resume = true;
  return options;
}

train::TrainOptions restart_option() {
  train::TrainOptions options;
  options.restart = true;
  return options;
}

std::string read_text(const std::string& path) {
  std::ifstream file(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(file), std::istreambuf_iterator<char>());
}

// The steps of the "train" records of a train.log.jsonl, in file order.
std::vector<int64_t> train_steps(const std::string& log_path) {
  std::vector<int64_t> steps;
  std::ifstream log(log_path);
  for (std::string line; std::getline(log, line);) {
    json record = json::parse(line);
    if (record.at("type") == "train") steps.push_back(record.at("step").get<int64_t>());
  }
  return steps;
}

// The names of the entries of `dir`, sorted.
std::vector<std::string> entries_of(const std::string& dir) {
  std::vector<std::string> names;
  for (const auto& entry : fs::directory_iterator(dir)) names.push_back(entry.path().filename().string());
  std::sort(names.begin(), names.end());
  return names;
}

// The subfolders --restart made, sorted.
std::vector<std::string> aside_folders(const std::string& dir) {
  std::vector<std::string> folders;
  for (const std::string& name : entries_of(dir))
    if (name.rfind("previous-run-", 0) == 0) folders.push_back(name);
  return folders;
}

// A checkpoint rewritten without the metadata key `key`, as a run from before it existed.
void drop_metadata(const std::string& path, const std::string& key) {
  io::SafetensorsFile file = io::read_safetensors(path);
  file.metadata.erase(key);
  file.metadata.erase("data_crc32c");  // the rewrite below does not compute it
  std::vector<io::TensorEntry> entries;
  for (const io::StoredTensor& tensor : file.tensors)
    entries.push_back({tensor.name, tensor.dtype, tensor.shape, tensor.bytes.data(), tensor.bytes.size()});
  io::write_safetensors(path, entries, file.metadata);
}

const std::string kInUse = " is in use by attn-train process ";

// The run id a checkpoint records ("" for none).
std::string run_id_in(const std::string& checkpoint) {
  return run::run_id_of(checkpoint, io::read_safetensors_metadata(checkpoint));
}

// Every file of `dir` (not its folders) -> its bytes.
std::map<std::string, std::string> files_of(const std::string& dir) {
  std::map<std::string, std::string> files;
  for (const auto& entry : fs::directory_iterator(dir))
    if (entry.is_regular_file()) files[entry.path().filename().string()] = read_text(entry.path().string());
  return files;
}

}  // namespace

TEST_CASE("a second trainer on a locked run directory stops at once - naming the directory and the holder's PID",
          "[train][run_directory][lock]") {
  TinyRun run(kTwoSteps);
  io::FileLock held = *io::FileLock::try_lock(run.run_dir + "/train.lock");  // as a running attn-train would
  const std::string expected = "the run directory " + run.run_dir + kInUse + std::to_string(getpid()) +
                               ", which holds " + run.run_dir +
                               "/train.lock; wait for it to end or stop it, or set another output_dir";
  CHECK(error_of_training(run.config) == expected);
  CHECK(error_of_training(run.config, restart_option()) == expected);
  CHECK(error_of_training(run.config, resume_option()) == expected);  // even before its first checkpoint
  CHECK(entries_of(run.run_dir) == std::vector<std::string>{"spm.model", "train.lock"});  // nothing written
}

TEST_CASE("the trainer holds the lock while it trains and releases it after", "[train][run_directory][lock]") {
  TinyRun run(kTwoSteps);
  bool held_during = false;
  train::TrainOptions options;
  options.after_backward = [&](int64_t, ParameterStore&) {
    held_during = io::lock_is_held(run.run_dir + "/train.lock");
  };
  train::train(run.config, options);
  CHECK(held_during);
  CHECK(io::lock_holder(run.run_dir + "/train.lock") == getpid());
  CHECK_FALSE(io::lock_is_held(run.run_dir + "/train.lock"));
}

TEST_CASE("a run without checkpoint.last is refused with and without --resume - and nothing in it changes",
          "[train][run_directory]") {
  TinyRun run(kTwoSteps);
  train::train(run.config, {});
  fs::remove(run.last_checkpoint());
  const std::string best = read_text(run.best_checkpoint()), log = read_text(run.run_dir + "/train.log.jsonl");
  const std::string what = "the run directory " + run.run_dir +
                           " holds an unfinished run (config.json, vocab.sha256, train.log.jsonl, "
                           "checkpoint.best.safetensors, spm.model) but no checkpoint.last.safetensors to continue "
                           "from: it was stopped before its first save, or that file was deleted. Start it over with "
                           "--restart, which moves these files into a dated subfolder of " +
                           run.run_dir + ", or set another output_dir";
  CHECK(error_of_training(run.config) == what);
  CHECK(error_of_training(run.config, resume_option()) == "--resume: " + what);
  CHECK(read_text(run.best_checkpoint()) == best);
  CHECK(read_text(run.run_dir + "/train.log.jsonl") == log);
  CHECK_FALSE(fs::exists(run.last_checkpoint()));
}

TEST_CASE("a complete run is not started over without --restart", "[train][run_directory]") {
  TinyRun run(kTwoSteps);
  train::train(run.config, {});
  CHECK(error_of_training(run.config) ==
        "the run directory " + run.run_dir +
            " already holds a run. Continue it with --resume, start it over with --restart (which moves its files "
            "into a dated subfolder), or set another output_dir");
}

TEST_CASE("restart (--restart) moves the old run into a dated subfolder - deleting nothing - and starts over",
          "[train][run_directory]") {
  TinyRun run(kTwoSteps);
  train::train(run.config, {});
  fs::remove(run.last_checkpoint());
  const std::string best = read_text(run.best_checkpoint());
  train::train(run.config, restart_option());

  const std::vector<std::string> folders = aside_folders(run.run_dir);
  REQUIRE(folders.size() == 1);
  CHECK_THAT(folders[0], Catch::Matches("previous-run-[0-9]{8}-[0-9]{6}"));
  const std::string aside = run.run_dir + "/" + folders[0];
  CHECK(entries_of(aside) == std::vector<std::string>{"checkpoint.best.safetensors", "config.json", "spm.model",
                                                      "train.log.jsonl", "vocab.sha256"});
  CHECK(read_text(aside + "/checkpoint.best.safetensors") == best);
  // A new run from step 1, with a vocabulary trained anew (the supplied one moved aside too).
  CHECK(train_steps(run.run_dir + "/train.log.jsonl") == std::vector<int64_t>{1, 2});
  CHECK(run.last_state().step == 2);
  CHECK(fs::exists(run.run_dir + "/spm.vocab"));
}

TEST_CASE("restart (--restart) on a complete run moves it aside too - and with nothing to move it just starts",
          "[train][run_directory]") {
  TinyRun run(kTwoSteps);
  train::train(run.config, {});
  train::train(run.config, restart_option());
  REQUIRE(aside_folders(run.run_dir).size() == 1);
  CHECK(fs::exists(run.run_dir + "/" + aside_folders(run.run_dir)[0] + "/checkpoint.last.safetensors"));
  CHECK(run.last_state().step == 2);

  TinyRun empty(kTwoSteps);
  fs::remove(empty.run_dir + "/spm.model");
  train::train(empty.config, restart_option());
  CHECK(aside_folders(empty.run_dir).empty());
  CHECK(empty.last_state().step == 2);
}

TEST_CASE("restart (--restart) moves every file of a run - and the new run's files are its own with none overwritten",
          "[train][run_directory][restart]") {
  TinyRun run({{"max_steps", 4}, {"save_every", 2}, {"keep_checkpoints", 5}});
  train::train(run.config, {});
  const std::string dir = run.run_dir;
  // What tools/main-job.sh, attn-dump-attention --choose-alignment and a killed save leave beside it.
  run::average_checkpoints(run::step_checkpoints(dir), dir + "/checkpoint.average.safetensors", false);
  attn::testing::write_file(dir + "/alignment.json", "{\"layer\": 0, \"head\": 1}\n");
  attn::testing::write_file(dir + "/test.beam5.txt", "una frase\n");
  attn::testing::write_file(dir + "/test.beam5.score", "BLEU = 1.0\n");
  attn::testing::write_file(dir + "/checkpoint.step-6.safetensors.tmp", "a leftover of a killed save");
  std::map<std::string, std::string> old_files = files_of(dir);
  old_files.erase("train.lock");  // the directory's, not the run's: it stays
  const std::string old_id = run_id_in(run.last_checkpoint());
  for (const std::string name : {"checkpoint.step-2.safetensors", "checkpoint.step-4.safetensors",
                                 "checkpoint.best.safetensors", "checkpoint.average.safetensors"})
    CHECK(run_id_in(dir + "/" + name) == old_id);

  // Stopped earlier this time: it saves checkpoint.step-2 again, the old run's name.
  io::Config shorter = run.config;
  shorter.train.max_steps = 2;
  train::train(shorter, restart_option());

  REQUIRE(aside_folders(dir).size() == 1);
  const std::string aside = dir + "/" + aside_folders(dir)[0];
  CHECK(files_of(aside) == old_files);  // every file moved, byte for byte
  CHECK(entries_of(dir) == std::vector<std::string>{"checkpoint.best.safetensors", "checkpoint.last.safetensors",
                                                    "checkpoint.step-2.safetensors", "config.json",
                                                    aside_folders(dir)[0], "spm.model", "spm.vocab", "train.lock",
                                                    "train.log.jsonl", "vocab.sha256"});
  const std::string new_id = run_id_in(run.last_checkpoint());
  CHECK_THAT(new_id, Catch::Matches("[0-9a-f]{32}"));
  CHECK(new_id != old_id);
  CHECK(run_id_in(run.best_checkpoint()) == new_id);
  CHECK(run_id_in(dir + "/checkpoint.step-2.safetensors") == new_id);
  // The old run's checkpoint beside the new one's: refused, naming both.
  CHECK_THROWS_WITH(
      run::average_parameters({dir + "/checkpoint.step-2.safetensors", aside + "/checkpoint.step-4.safetensors"}),
      aside + "/checkpoint.step-4.safetensors is of run " + old_id + " but " + dir +
          "/checkpoint.step-2.safetensors is of run " + new_id +
          ": checkpoints of different runs cannot be averaged; average checkpoints of one run");
}

TEST_CASE("restart (--restart) refuses a directory holding files that are not a run's - naming them and moving nothing",
          "[train][run_directory][restart]") {
  TinyRun run(kTwoSteps);
  train::train(run.config, {});
  attn::testing::write_file(run.run_dir + "/notes.txt", "mine");
  const std::vector<std::string> before = entries_of(run.run_dir);
  CHECK(error_of_training(run.config, restart_option()) ==
        "--restart: the run directory " + run.run_dir +
            " holds notes.txt, which is not a file of a run: --restart moves only a run's own files aside, so that "
            "nothing else is moved unasked or mixed with the new run. Move it out of " +
            run.run_dir + ", then --restart again");
  fs::create_directory(run.run_dir + "/eval");
  CHECK_THROWS_WITH(train::move_run_aside(run::run_paths(run.run_dir, true), 1700000000),
                    Catch::StartsWith("--restart: the run directory " + run.run_dir +
                                      " holds eval, notes.txt, which are not files of a run: ") &&
                        Catch::EndsWith("Move them out of " + run.run_dir + ", then --restart again"));
  fs::remove(run.run_dir + "/eval");
  CHECK(entries_of(run.run_dir) == before);  // nothing moved
  CHECK(run.last_state().step == 2);

  fs::remove(run.run_dir + "/notes.txt");
  train::train(run.config, restart_option());
  CHECK(aside_folders(run.run_dir).size() == 1);
}

TEST_CASE("a fresh start refuses step checkpoints or an average without the rest of their run",
          "[train][run_directory][restart]") {
  TinyRun run(kTwoSteps);
  for (const std::string name : {"checkpoint.step-250.safetensors", "checkpoint.average.safetensors"}) {
    INFO(name);
    attn::testing::write_file(run.run_dir + "/" + name, "of some run");
    CHECK(error_of_training(run.config) == "the run directory " + run.run_dir + " holds an unfinished run (" + name +
                                               ", spm.model) but no checkpoint.last.safetensors to continue from: it "
                                               "was stopped before its first save, or that file was deleted. Start it "
                                               "over with --restart, which moves these files into a dated subfolder "
                                               "of " +
                                               run.run_dir + ", or set another output_dir");
    fs::remove(run.run_dir + "/" + name);
  }
}

TEST_CASE("every checkpoint records the run's id - --resume keeps it and a run from before run ids stays without",
          "[train][run_directory][restart]") {
  TinyRun run({{"max_steps", 2}, {"save_every", 2}, {"keep_checkpoints", 3}});
  train::train(run.config, {});
  const std::string id = run_id_in(run.last_checkpoint());
  CHECK_THAT(id, Catch::Matches("[0-9a-f]{32}"));
  io::Config more = run.config;
  more.train.max_steps = 4;
  const std::string step_4 = run.run_dir + "/checkpoint.step-4.safetensors";
  SECTION("resumed") {
    train::train(more, resume_option());
    CHECK(run.last_state().step == 4);
    CHECK(run_id_in(run.last_checkpoint()) == id);
    CHECK(run_id_in(step_4) == id);
  }
  SECTION("from before run ids") {
    for (const std::string& path : run::step_checkpoints(run.run_dir)) drop_metadata(path, "run_id");
    drop_metadata(run.last_checkpoint(), "run_id");
    train::train(more, resume_option());
    CHECK(run.last_state().step == 4);
    CHECK(run_id_in(run.last_checkpoint()).empty());
    CHECK(run_id_in(step_4).empty());
    CHECK_NOTHROW(run::average_parameters(run::step_checkpoints(run.run_dir)));  // still one run's
  }
}

TEST_CASE("run::run_entry_kind knows every file a run directory may hold", "[train][run_directory][restart]") {
  using run::RunEntry;
  for (const std::string name :
       {"config.json", "vocab.sha256", "train.log.jsonl", "checkpoint.best.safetensors", "checkpoint.last.safetensors",
        "checkpoint.average.safetensors", "checkpoint.step-250.safetensors", "avg5.safetensors", "alignment.json",
        "test.beam5.txt", "test.beam5.score"})
    CHECK(run::run_entry_kind(name, false) == RunEntry::run_file);
  for (const std::string name : {"spm.model", "spm.vocab", "spm.src.model", "spm.tgt.vocab"})
    CHECK(run::run_entry_kind(name, false) == RunEntry::vocabulary);
  for (const std::string name :
       {"config.json.tmp", "checkpoint.last.safetensors.tmp", "spm.tmp.model", "spm.src.tmp.vocab"})
    CHECK(run::run_entry_kind(name, false) == RunEntry::leftover);
  CHECK(run::run_entry_kind("train.lock", false) == RunEntry::lock);
  CHECK(run::run_entry_kind("previous-run-20260101-120000-2", true) == RunEntry::earlier_run);
  for (const std::string name : {"notes.txt", "config.yaml", "spm.model.bak", "test", "train.log"})
    CHECK(run::run_entry_kind(name, false) == RunEntry::unknown);
  CHECK(run::run_entry_kind("previous-run-20260101-120000", false) == RunEntry::unknown);  // a file, not a folder
  CHECK(run::run_entry_kind("config.json", true) == RunEntry::unknown);
}

TEST_CASE("two restarts in the same second get two subfolders", "[train][run_directory]") {
  TinyRun run;
  const run::RunPaths paths = run::run_paths(run.run_dir, true);
  const std::time_t when = 1700000000;
  attn::testing::write_file(paths.config, "first");
  attn::testing::write_file(paths.last_checkpoint + ".tmp", "a leftover of a killed save");
  const std::string first = train::move_run_aside(paths, when);
  attn::testing::write_file(paths.config, "second");
  const std::string second = train::move_run_aside(paths, when);
  CHECK(second == first + "-2");
  CHECK(read_text(first + "/config.json") == "first");
  CHECK(read_text(second + "/config.json") == "second");
  CHECK(entries_of(first) == std::vector<std::string>{"checkpoint.last.safetensors.tmp", "config.json", "spm.model"});
  CHECK(train::move_run_aside(paths, when).empty());  // nothing left to move: no folder
  CHECK(aside_folders(run.run_dir).size() == 2);
}

TEST_CASE("the options resume and restart exclude each other", "[train][run_directory]") {
  TinyRun run(kTwoSteps);
  train::TrainOptions both = resume_option();
  both.restart = true;
  CHECK(error_of_training(run.config, both) ==
        "--resume and --restart exclude each other: --resume continues the run, --restart starts a new one");
}

TEST_CASE("resume (--resume) without a run fails before any work - and writes nothing", "[train][run_directory]") {
  TinyRun run(kTwoSteps);
  fs::remove(run.config.data.train_src);  // reading the corpus would fail differently
  SECTION("no run directory") {
    fs::remove_all(run.run_dir);
    CHECK(error_of_training(run.config, resume_option()) == "--resume: there is no run to resume: the run directory " +
                                                                run.run_dir +
                                                                " (config key output_dir) does not exist");
    CHECK_FALSE(fs::exists(run.run_dir));
  }
  SECTION("a directory with a vocabulary only") {
    CHECK(error_of_training(run.config, resume_option()) ==
          "--resume: there is no run to resume in " + run.run_dir + " (no checkpoint.last.safetensors)");
    CHECK(entries_of(run.run_dir) == std::vector<std::string>{"spm.model"});
  }
}

TEST_CASE("the vocabulary's sha256 is in vocab.sha256 (sha256sum's format) and in every checkpoint",
          "[train][run_directory][vocab]") {
  TinyRun run(kTwoSteps);
  train::train(run.config, {});
  const std::string digest = io::sha256_of_file(run.run_dir + "/spm.model");
  CHECK(read_text(run.run_dir + "/vocab.sha256") == digest + "  spm.model\n");
  for (const std::string& path : {run.last_checkpoint(), run.best_checkpoint()})
    CHECK(io::load_checkpoint(path).metadata.at("vocab_sha256") == "{\"spm.model\":\"" + digest + "\"}");
}

TEST_CASE("a replaced or missing vocabulary is an error for --resume and run::load_run - naming the file",
          "[train][run_directory][vocab][faults]") {
  TinyRun run(kTwoSteps);
  train::train(run.config, {});
  const std::string vocab = run.run_dir + "/spm.model";
  const std::string recorded = io::sha256_of_file(vocab);
  SECTION("replaced") {
    fs::copy_file(attn::testing::tiny_vocab_model("bpe"), vocab, fs::copy_options::overwrite_existing);
    const std::string expected = vocab + " is not the vocabulary this run was trained with: its sha256 is " +
                                 io::sha256_of_file(vocab) + " but " + run.run_dir + "/vocab.sha256 records " +
                                 recorded +
                                 ". The run's checkpoints work only with their own vocabulary: put the original "
                                 "file back";
    CHECK(error_of_training(run.config, resume_option()) == expected);
    CHECK(error_of_loading(run.run_dir) == expected);
    SECTION("and no vocab.sha256: the checkpoint's record tells") {
      fs::remove(run.run_dir + "/vocab.sha256");
      CHECK_THAT(error_of_loading(run.run_dir),
                 Catch::StartsWith(run.best_checkpoint() + " was trained with another vocabulary: it records sha256 " +
                                   recorded + " for spm.model but " + vocab + " has "));
      CHECK_THAT(error_of_training(run.config, resume_option()),
                 Catch::StartsWith(run.last_checkpoint() + " was trained with another vocabulary"));
    }
  }
  SECTION("missing: --resume does not train a new one") {
    fs::remove(vocab);
    CHECK(error_of_training(run.config, resume_option()) ==
          "--resume: " + vocab +
              " is missing; the run's checkpoints work only with the vocabulary they were trained with: put it back");
    CHECK_FALSE(fs::exists(vocab));
  }
}

TEST_CASE("a run from before the vocabulary record still loads and resumes - and is recorded from then on",
          "[train][run_directory][vocab]") {
  TinyRun run(kTwoSteps);
  train::train(run.config, {});
  fs::remove(run.run_dir + "/vocab.sha256");
  drop_metadata(run.best_checkpoint(), "vocab_sha256");
  drop_metadata(run.last_checkpoint(), "vocab_sha256");
  CHECK_NOTHROW(run::load_run(run.run_dir));
  io::Config more = run.config;
  more.train.max_steps = 4;
  train::train(more, resume_option());
  CHECK(run.last_state().step == 4);
  CHECK(fs::exists(run.run_dir + "/vocab.sha256"));
  CHECK(io::load_checkpoint(run.last_checkpoint()).metadata.count("vocab_sha256") == 1);
}

TEST_CASE("a supplied vocabulary of another size than vocab.size is refused before anything is written",
          "[train][run_directory][vocab]") {
  TinyRun run(kTwoSteps);
  run.config.vocab.size = 64;
  CHECK(error_of_training(run.config) == run.run_dir +
                                             "/spm.model has 100 pieces but config key vocab.size is 64: "
                                             "set vocab.size to 100 to use this vocabulary");
  CHECK(entries_of(run.run_dir) == std::vector<std::string>{"spm.model", "train.lock"});
}

TEST_CASE("run::load_run says that a file is not a run directory", "[train][run_directory]") {
  TinyRun run(kTwoSteps);
  train_two_steps(run);
  CHECK(error_of_loading(run.last_checkpoint()) ==
        run.last_checkpoint() +
            " is not a directory: a model is the run directory attn-train writes (its config's output_dir), not a "
            "file in it");
  CHECK(error_of_loading(run.dir.file("nowhere")) == "model directory " + run.dir.file("nowhere") + " does not exist");
}

TEST_CASE("run::load_run refuses a checkpoint with a flipped byte - naming it", "[train][run_directory][faults]") {
  TinyRun run(kTwoSteps);
  train_two_steps(run);
  {
    std::fstream file(run.last_checkpoint(), std::ios::in | std::ios::out | std::ios::binary);
    file.seekg(-9, std::ios::end);
    const char byte = static_cast<char>(file.get() ^ 0x40);
    file.seekp(-9, std::ios::end);
    file.put(byte);
  }
  CHECK_THAT(error_of_loading(run.run_dir), Catch::StartsWith(run.last_checkpoint() + ": the file is damaged"));
}
