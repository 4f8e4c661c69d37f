// A run directory must never be damaged silently, tried as a user would with the real
// programs: two trainers on one directory, a run without its checkpoint.last, --restart, a
// replaced or deleted vocabulary, bad training files, a damaged checkpoint, --model naming a
// file. (In-process tests of the same rules: tests/train/test_run_directory.cpp.)
#include <algorithm>
#include <chrono>
#include <csignal>
#include <filesystem>
#include <fstream>
#include <map>
#include <thread>

#include <catch2/catch.hpp>

#include "apps/app_fixtures.h"
#include "data/data_fixtures.h"
#include "io/file_lock.h"
#include "io/safetensors.h"
#include "run/load_run.h"
#include "run/run_files.h"
#include "train/train_state.h"
#include "wait_until.h"

using namespace attn;
using namespace attn::testing;
using nlohmann::json;
namespace fs = std::filesystem;

namespace {

const json kTwentySteps = {{"max_steps", 20}, {"save_every", 10}, {"valid_every", 10}};

// Polls until `pid` is the process named in the lock file (it holds the lock then).
bool wait_for_holder(const std::string& lock, pid_t pid, double seconds) {
  return wait_until([&] { return io::lock_holder(lock, 0) == pid && io::lock_is_held(lock); }, seconds);
}

std::vector<std::string> aside_folders(const std::string& run_dir) {
  std::vector<std::string> folders;
  for (const auto& entry : fs::directory_iterator(run_dir))
    if (entry.path().filename().string().rfind("previous-run-", 0) == 0) folders.push_back(entry.path().string());
  return folders;
}

void flip_byte_near_end(const std::string& path) {
  std::fstream file(path, std::ios::in | std::ios::out | std::ios::binary);
  file.seekg(-13, std::ios::end);
  const char byte = static_cast<char>(file.get() ^ 0x10);
  file.seekp(-13, std::ios::end);
  file.put(byte);
}

std::string train_args(const std::string& config, const std::string& more = "") {
  return "--config " + quoted(config) + more;
}

}  // namespace

TEST_CASE("a second attn-train on a run directory in use stops at once naming it and the first's PID",
          "[cli][run_directory][lock]") {
  TempDir dir;
  const std::string config = write_tiny_setup(dir, kEndless);
  const std::string run_dir = dir.file("run"), lock = run_dir + "/train.lock";
  const pid_t first = spawn(dir, "attn-train", {"--config", config});
  REQUIRE(wait_for_holder(lock, first, 120));
  for (const std::string flag : {"", " --resume", " --restart"}) {
    INFO("second attn-train with '" << flag << "'");
    const auto start = std::chrono::steady_clock::now();
    Result second = run_program(dir, "attn-train", train_args(config, flag));
    const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    INFO("stderr:\n" << second.err);
    CHECK(second.exit_code == 1);
    CHECK(split_lines(second.err).size() == 1);
    CHECK_THAT(second.err, Catch::Contains("the run directory " + run_dir + " is in use by attn-train process " +
                                           std::to_string(first) + ", which holds " + lock +
                                           "; wait for it to end or stop it, or set another output_dir"));
    CHECK(seconds < 10);
  }
  CHECK(aside_folders(run_dir).empty());  // --restart moved nothing

  REQUIRE(wait_for_file(run_dir + "/checkpoint.last.safetensors", 300));  // in the training loop, which stops cleanly
  kill(first, SIGTERM);
  CHECK(wait_for(first) == 0);  // the first finishes normally
  const std::vector<int64_t> steps = logged_steps(run_dir + "/train.log.jsonl", "train");
  REQUIRE(!steps.empty());
  CHECK(std::adjacent_find(steps.begin(), steps.end(), std::greater_equal<int64_t>()) == steps.end());
  CHECK_NOTHROW(run::load_run(run_dir));
}

TEST_CASE("the lock of an attn-train killed with SIGKILL is free at once: --resume continues the run",
          "[cli][run_directory][lock][faults]") {
  TempDir dir;
  const std::string config = write_tiny_setup(dir, kEndless);
  const std::string run_dir = dir.file("run"), lock = run_dir + "/train.lock";
  const pid_t first = spawn(dir, "attn-train", {"--config", config});
  REQUIRE(wait_for_file(run_dir + "/checkpoint.last.safetensors", 300));
  kill(first, SIGKILL);
  REQUIRE(wait_for(first) == -SIGKILL);
  CHECK(io::lock_holder(lock) == first);  // its PID is still written there, but the lock is free
  CHECK_FALSE(io::lock_is_held(lock));
  const int64_t step = train::train_state_of(io::load_checkpoint(run_dir + "/checkpoint.last.safetensors")).step;
  Result resumed =
      run_program(dir, "attn-train", train_args(config, " --resume --set train.max_steps=" + std::to_string(step + 5)));
  INFO("stderr:\n" << resumed.err);
  CHECK(resumed.exit_code == 0);
}

TEST_CASE("attn-train refuses a run without checkpoint.last saying what is there - and --restart moves it aside",
          "[cli][run_directory]") {
  TempDir dir;
  const std::string config = write_tiny_setup(dir, kTwentySteps);
  const std::string run_dir = dir.file("run");
  REQUIRE(run_program(dir, "attn-train", train_args(config)).exit_code == 0);
  fs::remove(run_dir + "/checkpoint.last.safetensors");
  const std::string best = read_text(run_dir + "/checkpoint.best.safetensors");
  const std::string log = read_text(run_dir + "/train.log.jsonl");

  for (const std::string flag : {"", " --resume"}) {
    INFO("attn-train '" << flag << "'");
    Result refused = run_program(dir, "attn-train", train_args(config, flag));
    CHECK(refused.exit_code == 1);
    CHECK(split_lines(refused.err).size() == 1);
    CHECK_THAT(refused.err,
               Catch::Contains("the run directory " + run_dir +
                               " holds an unfinished run (config.json, vocab.sha256, train.log.jsonl, "
                               "checkpoint.best.safetensors, spm.model, spm.vocab) but no checkpoint.last.safetensors "
                               "to continue from: it was stopped before its first save, or that file was deleted. "
                               "Start it over with --restart, which moves these files into a dated subfolder of " +
                               run_dir + ", or set another output_dir"));
  }
  CHECK(read_text(run_dir + "/checkpoint.best.safetensors") == best);
  CHECK(read_text(run_dir + "/train.log.jsonl") == log);

  Result both = run_program(dir, "attn-train", train_args(config, " --restart --resume"));
  CHECK(both.exit_code != 0);
  CHECK_THAT(both.err, Catch::Contains("--resume excludes --restart"));

  Result restarted = run_program(dir, "attn-train", train_args(config, " --restart"));
  INFO("attn-train --restart stderr:\n" << restarted.err);
  REQUIRE(restarted.exit_code == 0);
  const std::vector<std::string> folders = aside_folders(run_dir);
  REQUIRE(folders.size() == 1);
  CHECK_THAT(restarted.err, Catch::Contains("--restart: the earlier run's files are now in " + folders[0]));
  CHECK(read_text(folders[0] + "/checkpoint.best.safetensors") == best);
  CHECK(read_text(folders[0] + "/train.log.jsonl") == log);
  for (const char* name : {"config.json", "spm.model", "spm.vocab", "vocab.sha256"})
    CHECK(fs::exists(folders[0] + "/" + name));
  CHECK(logged_steps(run_dir + "/train.log.jsonl", "train") == std::vector<int64_t>{10, 20});  // no step twice
}

namespace {

// Every file of `dir` (not its folders) -> its bytes.
std::map<std::string, std::string> files_of(const std::string& dir) {
  std::map<std::string, std::string> files;
  for (const auto& entry : fs::directory_iterator(dir))
    if (entry.is_regular_file()) files[entry.path().filename().string()] = read_text(entry.path().string());
  return files;
}

std::string run_id_in(const std::string& checkpoint) {
  return run::run_id_of(checkpoint, io::read_safetensors_metadata(checkpoint));
}

}  // namespace

TEST_CASE(
    "attn-train --restart of a run with step checkpoints overwrites and mixes nothing - attn-average refuses "
    "checkpoints of two runs",
    "[cli][run_directory][restart][average]") {
  TempDir dir;
  const std::string config =
      write_tiny_setup(dir, {{"max_steps", 20}, {"save_every", 5}, {"valid_every", 10}, {"keep_checkpoints", 3}});
  const std::string run_dir = dir.file("run"), model = "--model " + quoted(run_dir);
  REQUIRE(run_program(dir, "attn-train", train_args(config)).exit_code == 0);  // keeps steps 10, 15 and 20
  // What tools/main-job.sh leaves: the average, the test set's translation and its score.
  REQUIRE(
      run_program(dir, "attn-average", model + " --last 3 --out " + quoted(run_dir + "/checkpoint.average.safetensors"))
          .exit_code == 0);
  REQUIRE(run_program(dir, "attn-translate", model + " --output " + quoted(run_dir + "/test.beam5.txt"),
                      dir.file("valid.src"))
              .exit_code == 0);
  write_lines(run_dir + "/test.beam5.score", {"BLEU = 1.0"});
  std::map<std::string, std::string> old_files = files_of(run_dir);
  old_files.erase("train.lock");
  const std::string old_id = run_id_in(run_dir + "/checkpoint.last.safetensors");

  // A shorter run this time: it saves checkpoint.step-10 again, a name the old run used.
  Result restarted = run_program(dir, "attn-train", train_args(config, " --restart --set train.max_steps=10"));
  INFO("attn-train --restart stderr:\n" << restarted.err);
  REQUIRE(restarted.exit_code == 0);
  const std::vector<std::string> folders = aside_folders(run_dir);
  REQUIRE(folders.size() == 1);
  CHECK(files_of(folders[0]) == old_files);  // every file of the old run moved, byte for byte
  std::vector<std::string> kept;
  for (const std::string& path : run::step_checkpoints(run_dir)) kept.push_back(fs::path(path).filename().string());
  CHECK(kept == std::vector<std::string>{"checkpoint.step-5.safetensors", "checkpoint.step-10.safetensors"});
  for (const char* gone : {"checkpoint.average.safetensors", "test.beam5.txt", "test.beam5.score"})
    CHECK_FALSE(fs::exists(run_dir + "/" + gone));
  const std::string new_id = run_id_in(run_dir + "/checkpoint.last.safetensors");
  CHECK(new_id != old_id);
  for (const std::string& path : run::step_checkpoints(run_dir)) CHECK(run_id_in(path) == new_id);

  Result averaged = run_program(dir, "attn-average", model + " --last 2 --out " + quoted(dir.file("new.safetensors")));
  INFO("attn-average stderr:\n" << averaged.err);
  CHECK(averaged.exit_code == 0);
  CHECK(run_id_in(dir.file("new.safetensors")) == new_id);
  const std::string new_step = run_dir + "/checkpoint.step-10.safetensors";
  const std::string old_step = folders[0] + "/checkpoint.step-20.safetensors";
  Result mixed =
      run_program(dir, "attn-average",
                  "--out " + quoted(dir.file("mixed.safetensors")) + " " + quoted(new_step) + " " + quoted(old_step));
  check_refused(mixed, old_step + " is of run " + old_id + " but " + new_step + " is of run " + new_id +
                           ": checkpoints of different runs cannot be averaged");
  CHECK_FALSE(fs::exists(dir.file("mixed.safetensors")));
}

TEST_CASE("attn-train --restart refuses a file that is not a run's - naming it before any work",
          "[cli][run_directory][restart]") {
  TempDir dir;
  const std::string config = write_tiny_setup(dir, kTwentySteps);
  const std::string run_dir = dir.file("run");
  REQUIRE(run_program(dir, "attn-train", train_args(config)).exit_code == 0);
  write_lines(run_dir + "/notes.txt", {"mine"});
  const std::map<std::string, std::string> before = files_of(run_dir);
  fs::remove(dir.file("train.src"));  // reading the corpus would fail differently
  check_refused(run_program(dir, "attn-train", train_args(config, " --restart")),
                "--restart: the run directory " + run_dir + " holds notes.txt, which is not a file of a run");
  CHECK(files_of(run_dir) == before);
  CHECK(aside_folders(run_dir).empty());
}

TEST_CASE("a replaced vocabulary stops attn-train --resume and attn-translate - a deleted one is not trained anew",
          "[cli][run_directory][vocab]") {
  TempDir dir;
  const std::string config = write_tiny_setup(dir, kTwentySteps);
  const std::string run_dir = dir.file("run"), vocab = run_dir + "/spm.model";
  REQUIRE(run_program(dir, "attn-train", train_args(config)).exit_code == 0);
  write_lines(dir.file("input.txt"), {"kan tan"});

  fs::copy_file(tiny_vocab_model("unigram"), vocab, fs::copy_options::overwrite_existing);
  const std::string mismatch = vocab + " is not the vocabulary this run was trained with: its sha256 is ";
  Result resumed = run_program(dir, "attn-train", train_args(config, " --resume --set train.max_steps=30"));
  CHECK(resumed.exit_code == 1);
  CHECK_THAT(resumed.err, Catch::Contains(mismatch) && Catch::Contains(run_dir + "/vocab.sha256 records "));
  Result translated = run_program(dir, "attn-translate", "--model " + quoted(run_dir), dir.file("input.txt"));
  CHECK(translated.exit_code == 1);
  CHECK(translated.out.empty());
  CHECK_THAT(translated.err, Catch::Contains(mismatch));
  Result dumped =
      run_program(dir, "attn-dump-attention", "--model " + quoted(run_dir) + " --src " + dir.file("input.txt"));
  CHECK(dumped.exit_code == 1);
  CHECK_THAT(dumped.err, Catch::Contains(mismatch));

  fs::remove(vocab);
  resumed = run_program(dir, "attn-train", train_args(config, " --resume --set train.max_steps=30"));
  CHECK(resumed.exit_code == 1);
  CHECK_THAT(resumed.err, Catch::Contains("--resume: " + vocab + " is missing"));
  CHECK_FALSE(fs::exists(vocab));
  CHECK(train::train_state_of(io::load_checkpoint(run_dir + "/checkpoint.last.safetensors")).step == 20);
}

TEST_CASE("bad training files are named with their config key before anything is written - then a fixed run starts",
          "[cli][run_directory][faults]") {
  TempDir dir;
  const std::string config = write_tiny_setup(dir, kTwentySteps);
  const std::vector<std::string> train_tgt = split_lines(read_text(dir.file("train.tgt")));
  SECTION("an empty training file") {
    write_lines(dir.file("train.src"), {});
    Result result = run_program(dir, "attn-train", train_args(config));
    CHECK(result.exit_code == 1);
    CHECK(split_lines(result.err).size() == 1);  // none of SentencePiece's lines
    CHECK_THAT(result.err, Catch::Contains("config key data.train_src: file '" + dir.file("train.src") +
                                           "' is empty; training needs sentences"));
    write_lines(dir.file("train.src"), synthetic_corpus(200, 1).src);
  }
  SECTION("line counts that differ (found before the vocabulary is trained)") {
    write_lines(dir.file("train.tgt"), std::vector<std::string>(train_tgt.begin(), train_tgt.end() - 1));
    Result result = run_program(dir, "attn-train", train_args(config));
    CHECK(result.exit_code == 1);
    CHECK_THAT(result.err, Catch::Contains("config keys data.train_src and data.train_tgt: '" + dir.file("train.src") +
                                           "' has 200 lines but '" + dir.file("train.tgt") +
                                           "' has 199; the two sides must align line by line"));
    write_lines(dir.file("train.tgt"), train_tgt);
  }
  CHECK_FALSE(fs::exists(dir.file("run")));
  Result fixed = run_program(dir, "attn-train", train_args(config));  // nothing stale left behind
  INFO("stderr:\n" << fixed.err);
  CHECK(fixed.exit_code == 0);
}

TEST_CASE("attn-train --resume without a run fails at once - before reading the corpus", "[cli][run_directory]") {
  TempDir dir;
  const std::string config = write_tiny_setup(dir, kTwentySteps);
  fs::remove(dir.file("train.src"));
  Result result = run_program(dir, "attn-train", train_args(config, " --resume"));
  CHECK(result.exit_code == 1);
  CHECK_THAT(result.err, Catch::Contains("--resume: there is no run to resume: the run directory " + dir.file("run") +
                                         " (config key output_dir) does not exist"));
  CHECK_FALSE(fs::exists(dir.file("run")));
}

TEST_CASE("attn-tokenize train: an input without text is one line naming it - no SentencePiece output or abort",
          "[cli][vocab]") {
  TempDir dir;
  write_lines(dir.file("empty.txt"), {});
  write_lines(dir.file("blank.txt"), {"", "  ", "\t"});
  for (const std::string name : {"empty.txt", "blank.txt"}) {
    Result result = run_program(
        dir, "attn-tokenize",
        "train --input " + quoted(dir.file(name)) + " --model-prefix " + dir.file("m") + " --vocab-size 20");
    INFO("stderr:\n" << result.err);
    CHECK(result.exit_code == 1);  // not SentencePiece's abort
    CHECK(split_lines(result.err).size() == 1);
    CHECK_THAT(result.err, Catch::Contains("train_vocab: input file '" + dir.file(name) +
                                           "' has no text (it is empty or holds only blank lines)"));
  }
}

TEST_CASE("attn-translate names a damaged checkpoint - and says that --model naming a file is not a directory",
          "[cli][run_directory][faults]") {
  TempDir dir;
  const std::string config = write_tiny_setup(dir, kTwentySteps);
  const std::string run_dir = dir.file("run");
  REQUIRE(run_program(dir, "attn-train", train_args(config)).exit_code == 0);
  write_lines(dir.file("input.txt"), {"kan tan"});

  Result file =
      run_program(dir, "attn-translate", "--model " + quoted(run_dir + "/config.json"), dir.file("input.txt"));
  CHECK(file.exit_code == 1);
  CHECK_THAT(file.err, Catch::Contains(run_dir + "/config.json is not a directory: a model is the run directory"));

  flip_byte_near_end(run_dir + "/checkpoint.best.safetensors");
  Result damaged = run_program(dir, "attn-translate", "--model " + quoted(run_dir), dir.file("input.txt"));
  CHECK(damaged.exit_code == 1);
  CHECK(damaged.out.empty());
  CHECK_THAT(damaged.err, Catch::Contains(run_dir + "/checkpoint.best.safetensors: the file is damaged"));
}
