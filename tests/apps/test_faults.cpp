// The programs under faults, as a user meets them: attn-train killed (SIGKILL) at a random
// moment, stopped by SIGTERM/SIGINT, out of disk space, or missing a data file; attn-translate
// fed hostile bytes. Child processes run the real programs (apps/app_fixtures.h).
#include <algorithm>
#include <chrono>
#include <csignal>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <random>
#include <regex>
#include <sys/wait.h>
#include <thread>
#include <unistd.h>

#include <catch2/catch.hpp>

#include "apps/app_fixtures.h"
#include "io/checkpoint.h"
#include "run/load_run.h"
#include "train/train_state.h"

using namespace attn;
using namespace attn::testing;
using nlohmann::json;
namespace fs = std::filesystem;

namespace {

train::TrainState last_state(const std::string& run_dir) {
  return train::train_state_of(io::load_checkpoint(run_dir + "/checkpoint.last.safetensors"));
}

}  // namespace

TEST_CASE("attn-train killed at a random moment leaves a loadable run and --resume finishes it", "[cli][faults]") {
  TempDir dir;
  const std::string config = write_tiny_setup(dir, kEndless);
  const std::string run_dir = dir.file("run");
  pid_t pid = spawn(dir, "attn-train", {"--config", config});
  // SIGKILL whatever the child does then: training, saving, logging.
  REQUIRE(wait_for_file(run_dir + "/checkpoint.last.safetensors", 300));
  std::random_device random;
  const int delay_ms = std::uniform_int_distribution<int>(0, 300)(random);
  INFO("killed " << delay_ms << " ms after the first checkpoint appeared");
  std::this_thread::sleep_for(std::chrono::milliseconds(delay_ms));
  kill(pid, SIGKILL);
  REQUIRE(wait_for(pid) == -SIGKILL);

  REQUIRE_NOTHROW(run::load_run(run_dir));
  const train::TrainState killed = last_state(run_dir);
  CHECK(killed.step >= 5);
  CHECK(killed.step % 5 == 0);

  const std::string steps = std::to_string(killed.step + 5);
  Result resumed =
      run_program(dir, "attn-train", "--config " + quoted(config) + " --resume --set train.max_steps=" + steps);
  INFO("attn-train --resume stderr:\n" << resumed.err);
  REQUIRE(resumed.exit_code == 0);
  CHECK_THAT(resumed.err,
             Catch::Contains("resumed from") && Catch::Contains("at step " + std::to_string(killed.step) + " "));
  CHECK(last_state(run_dir).step == killed.step + 5);
  CHECK_FALSE(fs::exists(run_dir + "/checkpoint.last.safetensors.tmp"));
  CHECK_NOTHROW(run::load_run(run_dir));
}

TEST_CASE("SIGTERM or SIGINT: attn-train finishes the step - saves - exits 0 and says how to resume", "[cli][faults]") {
  for (int signal_number : {SIGTERM, SIGINT}) {
    INFO("signal " << signal_number);
    TempDir dir;
    const std::string config = write_tiny_setup(dir, kEndless);
    pid_t pid = spawn(dir, "attn-train", {"--config", config});
    REQUIRE(wait_for_file(dir.file("run/checkpoint.last.safetensors"), 300));
    kill(pid, signal_number);
    CHECK(wait_for(pid) == 0);
    const std::string err = read_text(dir.file("child.err"));
    INFO("attn-train stderr:\n" << err);
    std::smatch match;
    REQUIRE(std::regex_search(err, match, std::regex(R"(stopped by signal at step (\d+); checkpoint saved)")));
    CHECK_THAT(err, Catch::Contains("Continue with: attn-train --config ... --resume"));
    CHECK(last_state(dir.file("run")).step == std::stoll(match[1]));  // saved at the step it stopped
  }
}

TEST_CASE("a checkpoint write that fails (no space) is reported and the previous checkpoint stays", "[cli][faults]") {
  TempDir dir;
  const std::string config = write_tiny_setup(dir, {{"max_steps", 10}, {"save_every", 10}, {"valid_every", 10}});
  Result first = run_program(dir, "attn-train", "--config " + quoted(config));
  REQUIRE(first.exit_code == 0);
  const std::string last = dir.file("run/checkpoint.last.safetensors");
  const std::string saved = read_text(last);

  // A file size limit makes write() fail as a full disk does (EFBIG instead of ENOSPC); the
  // checkpoints (tens of KB) no longer fit, the log and config.json still do. SIGXFSZ is
  // ignored so that the write returns the error instead of killing the process.
  Result resumed = run_program(dir, "attn-train", "--config " + quoted(config) + " --resume --set train.max_steps=20",
                               "/dev/null", "trap '' XFSZ; ulimit -f 16;");
  INFO("attn-train stderr:\n" << resumed.err);
  CHECK(resumed.exit_code == 1);
  CHECK_THAT(resumed.err, Catch::Contains("step 20: saving the checkpoint failed: cannot write ") &&
                              Catch::Contains("File too large") && Catch::Contains("is unchanged."));
  CHECK(read_text(last) == saved);
  CHECK(last_state(dir.file("run")).step == 10);
  CHECK_FALSE(fs::exists(last + ".tmp"));
  CHECK_FALSE(fs::exists(dir.file("run/checkpoint.best.safetensors.tmp")));
}

TEST_CASE("an unwritable run directory is reported naming the file and the checkpoint stays", "[cli][faults]") {
  TempDir dir;
  const std::string config = write_tiny_setup(dir, {{"max_steps", 10}, {"save_every", 10}, {"valid_every", 10}});
  REQUIRE(run_program(dir, "attn-train", "--config " + quoted(config)).exit_code == 0);
  const std::string last = dir.file("run/checkpoint.last.safetensors");
  const std::string saved = read_text(last);

  // Read-only for everyone; root ignores permission bits, so as root the program runs as
  // nobody (setpriv, util-linux), which must still be able to read the setup.
  fs::permissions(dir.path(), fs::perms::owner_all | fs::perms::group_read | fs::perms::group_exec |
                                  fs::perms::others_read | fs::perms::others_exec);
  fs::permissions(dir.file("run"), fs::perms::owner_read | fs::perms::owner_exec | fs::perms::group_read |
                                       fs::perms::group_exec | fs::perms::others_read | fs::perms::others_exec);
  const std::string as_user = geteuid() == 0 ? "setpriv --reuid=65534 --regid=65534 --clear-groups" : "";
  Result resumed = run_program(dir, "attn-train", "--config " + quoted(config) + " --resume --set train.max_steps=20",
                               "/dev/null", as_user);
  fs::permissions(dir.file("run"), fs::perms::owner_all, fs::perm_options::add);  // so TempDir can clean up
  INFO("attn-train stderr:\n" << resumed.err);
  CHECK(resumed.exit_code == 1);
  CHECK_THAT(resumed.err, Catch::Contains("cannot create " + dir.file("run/")) && Catch::Contains("Permission denied"));
  CHECK(read_text(last) == saved);
  CHECK(last_state(dir.file("run")).step == 10);
}

TEST_CASE("attn-train names a missing data file and its config key and starts nothing", "[cli][faults]") {
  TempDir dir;
  const std::string config = write_tiny_setup(dir);
  fs::remove(dir.file("valid.tgt"));
  Result result = run_program(dir, "attn-train", "--config " + quoted(config));
  CHECK(result.exit_code == 1);
  CHECK(split_lines(result.err).size() == 1);
  CHECK_THAT(result.err,
             Catch::Contains("config key data.valid_tgt: file '" + dir.file("valid.tgt") + "' does not exist"));
  CHECK_FALSE(fs::exists(dir.file("run")));
}

TEST_CASE("attn-translate keeps hostile input line-aligned: invalid UTF-8 - NUL - CRLF - blank - huge lines",
          "[cli][faults]") {
  TempDir dir;
  const std::string config = write_tiny_setup(dir, {{"max_steps", 10}, {"save_every", 10}, {"valid_every", 10}});
  REQUIRE(run_program(dir, "attn-train", "--config " + quoted(config)).exit_code == 0);

  std::string huge;
  while (huge.size() < 100000) huge += "kan tol rin ";
  const std::vector<std::string> lines = {"kan ton",
                                          "",
                                          " \t  ",
                                          "kan \xff\xfe ton",          // invalid UTF-8
                                          std::string("kan\0ton", 7),  // NUL
                                          "kon tin\r",                 // CRLF
                                          huge,
                                          "\xc3\x28 \xe2\x82",  // broken 2- and 3-byte sequences
                                          "min"};
  std::string input;
  for (const auto& line : lines) input += line + "\n";
  input.pop_back();  // the last line has no newline
  std::ofstream(dir.file("input.txt"), std::ios::binary) << input;

  Result translated =
      run_program(dir, "attn-translate", "--model " + quoted(dir.file("run")) + " --quiet", dir.file("input.txt"));
  INFO("attn-translate stderr:\n" << translated.err);
  REQUIRE(translated.exit_code == 0);
  CHECK(std::count(translated.out.begin(), translated.out.end(), '\n') == long(lines.size()));
  std::vector<std::string> output = split_lines(translated.out);
  REQUIRE(output.size() == lines.size());
  CHECK(output[1].empty());
  CHECK(output[2].empty());
  CHECK_THAT(translated.err, Catch::Contains("input line 7 is longer than 63 tokens; using its first 63"));
  CHECK(split_lines(translated.err).size() == 1);  // that warning is all (--quiet: no summary)

  // Output that cannot be written (a full disk) is an error, not a silent exit 0.
  const std::string command = quoted(kApps + "attn-translate") + " --model " + quoted(dir.file("run")) + " < " +
                              quoted(dir.file("input.txt")) + " > /dev/full 2> " + quoted(dir.file("full.err"));
  CHECK(WEXITSTATUS(std::system(command.c_str())) == 1);
  CHECK_THAT(read_text(dir.file("full.err")), Catch::Contains("cannot write the translations to standard output"));
}
