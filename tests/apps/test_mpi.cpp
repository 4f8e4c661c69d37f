// Data-parallel training the way a user starts it: mpirun -np 2 attn-train (Open MPI). Built
// only when attn is built with MPI (ATTN_MPI).
#include <chrono>
#include <cmath>
#include <csignal>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <optional>
#include <sstream>
#include <sys/wait.h>
#include <thread>

#include <catch2/catch.hpp>

#include "apps/app_fixtures.h"
#include "io/checkpoint.h"
#include "io/file_lock.h"
#include "run/load_run.h"
#include "wait_until.h"

using namespace attn;
using namespace attn::testing;
using nlohmann::json;
namespace fs = std::filesystem;

namespace {

const std::string kTwoRanks = "mpirun -np 2 --oversubscribe";

// mpirun refuses to start as root unless told to (CI runs as root), and a container may forbid
// the cross-process memory copy that Open MPI's shared-memory transport tries first. Ranks
// waiting in a collective yield their core: ctest runs other tests beside this one.
void prepare_mpirun_environment() {
  setenv("OMPI_ALLOW_RUN_AS_ROOT", "1", 1);
  setenv("OMPI_ALLOW_RUN_AS_ROOT_CONFIRM", "1", 1);
  setenv("OMPI_MCA_btl_vader_single_copy_mechanism", "none", 1);
  setenv("OMPI_MCA_mpi_yield_when_idle", "1", 1);
}

// Dropout off: each rank draws its own masks, so only without it are the runs comparable.
// Adam's epsilon up from 1e-9: the key biases get a gradient that is zero in exact arithmetic
// (softmax ignores a shift shared by a whole row), so rounding noise of either summation order
// is all they see, and with a tiny epsilon Adam turns that noise into steps of +-lr.
const std::string kComparable = " --set model.transformer.dropout=0 --set train.adam_epsilon=1e-6";

// `key` of every train record of a run's log, by step.
std::map<int64_t, double> logged(const std::string& run_dir, const std::string& key) {
  std::map<int64_t, double> values;
  for (const std::string& line : split_lines(read_text(run_dir + "/train.log.jsonl"))) {
    json record = json::parse(line);
    if (record.at("type") == "train") values[record.at("step").get<int64_t>()] = record.at(key).get<double>();
  }
  return values;
}

// The process id of the attn-train rank `rank` whose command line holds `marker`, or -1.
pid_t find_rank(const std::string& marker, int rank) {
  const std::string wanted = "OMPI_COMM_WORLD_RANK=" + std::to_string(rank);
  for (const auto& entry : fs::directory_iterator("/proc")) {
    const std::string name = entry.path().filename();
    if (name.find_first_not_of("0123456789") != std::string::npos) continue;
    const std::string command = read_text(entry.path() / "cmdline");
    if (command.find("attn-train") == std::string::npos || command.find(marker) == std::string::npos) continue;
    std::istringstream environment(read_text(entry.path() / "environ"));  // NUL-separated entries
    for (std::string variable; std::getline(environment, variable, '\0');)
      if (variable == wanted) return pid_t(std::stol(name));
  }
  return -1;
}

// Waits for `pid` at most `seconds`; its exit code (or -signal), or nullopt if it still runs.
std::optional<int> wait_at_most(pid_t pid, double seconds) {
  int status = 0;
  if (!attn::testing::wait_until([&] { return waitpid(pid, &status, WNOHANG) == pid; }, seconds)) return std::nullopt;
  return WIFEXITED(status) ? WEXITSTATUS(status) : -WTERMSIG(status);
}

}  // namespace

TEST_CASE("2 ranks with half of every batch reach the parameters of 1 rank with the whole batch", "[cli][mpi]") {
  prepare_mpirun_environment();
  TempDir dir;
  const std::string config =
      write_tiny_setup(dir, {{"max_steps", 6}, {"save_every", 6}, {"valid_every", 6}, {"log_every", 1}});
  Result alone = run_program(dir, "attn-train", "--config " + quoted(config) + kComparable);
  INFO("1 rank, stderr:\n" << alone.err);
  REQUIRE(alone.exit_code == 0);

  // The same vocabulary for both runs, so that only the training differs.
  const std::string pair_dir = dir.file("run2");
  fs::create_directories(pair_dir);
  fs::copy_file(dir.file("run/spm.model"), pair_dir + "/spm.model");
  Result pair =
      run_program(dir, "attn-train", "--config " + quoted(config) + kComparable + " --set output_dir=" + pair_dir,
                  "/dev/null", kTwoRanks);
  INFO("2 ranks, stderr:\n" << pair.err);
  REQUIRE(pair.exit_code == 0);
  CHECK_THAT(pair.err, Catch::Contains("data-parallel over 2 ranks"));
  for (const std::string& line : split_lines(read_text(pair_dir + "/train.log.jsonl"))) {
    json record = json::parse(line);
    if (record.at("type") != "train") continue;
    CHECK(record.at("ranks") == 2);  // not two lone processes writing one directory
    CHECK(record.at("allreduce_s_per_step").get<double>() > 0);
  }

  // Same loss and gradient norm at every step (the norm would show a gradient summed or scaled
  // wrongly, which Adam's update hides), and the same parameters after the last step, up to
  // the changed order of summation (MPI adds the gradients of two half batches).
  for (const char* key : {"loss", "grad_norm"}) {
    std::map<int64_t, double> expected = logged(dir.file("run"), key), got = logged(pair_dir, key);
    REQUIRE(expected.size() == 6);
    REQUIRE(got.size() == expected.size());
    for (const auto& [step, value] : expected) {
      INFO(key << " at step " << step);
      CHECK(got.at(step) == Approx(value).epsilon(1e-5));
    }
  }
  io::Checkpoint a = io::load_checkpoint(dir.file("run/checkpoint.last.safetensors"));
  io::Checkpoint b = io::load_checkpoint(pair_dir + "/checkpoint.last.safetensors");
  REQUIRE(a.parameters.size() == b.parameters.size());
  double largest_difference = 0;
  for (const auto& [name, tensor] : a.parameters) {
    const Tensor& other = b.parameters.at(name);
    REQUIRE(other.numel() == tensor.numel());
    for (int64_t i = 0; i < tensor.numel(); ++i)
      largest_difference = std::max(largest_difference, double(std::abs(tensor.data()[i] - other.data()[i])));
  }
  INFO("largest parameter difference " << largest_difference);
  CHECK(largest_difference < 1e-4);  // the parameters move by about 1e-2 a step
}

TEST_CASE("a rank killed mid-run ends the others with an error and the last checkpoint stays loadable",
          "[cli][mpi][faults]") {
  prepare_mpirun_environment();
  TempDir dir;
  const std::string config =
      write_tiny_setup(dir, {{"max_steps", 1000000}, {"save_every", 5}, {"valid_every", 1000000}, {"log_every", 5}});
  const std::string run_dir = dir.file("run");
  pid_t launcher =
      spawn_command(dir, {"mpirun", "-np", "2", "--oversubscribe", kApps + "attn-train", "--config", config});
  REQUIRE(wait_for_file(run_dir + "/checkpoint.last.safetensors", 300));
  const pid_t rank1 = find_rank(config, 1);
  REQUIRE(rank1 > 0);
  kill(rank1, SIGKILL);

  std::optional<int> code = wait_at_most(launcher, 60);
  if (!code) kill(launcher, SIGKILL);
  const std::string err = read_text(dir.file("child.err"));
  INFO("mpirun stderr:\n" << err);
  REQUIRE(code.has_value());  // no hang
  CHECK(*code != 0);
  CHECK_THAT(err, Catch::Contains("rank 1") && Catch::Contains("signal 9"));
  CHECK(find_rank(config, 0) == -1);  // rank 0 is gone too
  CHECK_NOTHROW(run::load_run(run_dir));
}

TEST_CASE("under mpirun rank 0 holds the run's lock: another attn-train is refused naming rank 0's process",
          "[cli][mpi][lock]") {
  prepare_mpirun_environment();
  TempDir dir;
  const std::string config =
      write_tiny_setup(dir, {{"max_steps", 1000000}, {"save_every", 5}, {"valid_every", 1000000}, {"log_every", 5}});
  const std::string run_dir = dir.file("run");
  pid_t launcher =
      spawn_command(dir, {"mpirun", "-np", "2", "--oversubscribe", kApps + "attn-train", "--config", config});
  REQUIRE(wait_for_file(run_dir + "/checkpoint.last.safetensors", 300));
  const pid_t rank0 = find_rank(config, 0), rank1 = find_rank(config, 1);
  REQUIRE(rank0 > 0);
  REQUIRE(rank1 > 0);
  CHECK(io::lock_holder(run_dir + "/train.lock") == rank0);  // rank 1 took no lock, or it would have failed

  Result second = run_program(dir, "attn-train", "--config " + quoted(config) + " --resume");
  CHECK(second.exit_code == 1);
  CHECK_THAT(second.err, Catch::Contains(run_dir + " is in use by attn-train process " + std::to_string(rank0) + ","));

  kill(rank0, SIGTERM);  // as docs/guide.md "Training on several processes (MPI)" says: every rank
  kill(rank1, SIGTERM);
  std::optional<int> code = wait_at_most(launcher, 60);
  if (!code) kill(launcher, SIGKILL);
  INFO("mpirun stderr:\n" << read_text(dir.file("child.err")));
  REQUIRE(code.has_value());
  CHECK(*code == 0);
  std::vector<int64_t> steps;
  for (const auto& [step, loss] : logged(run_dir, "loss")) steps.push_back(step);
  CHECK(steps.size() == split_lines(read_text(run_dir + "/train.log.jsonl")).size());  // no step logged twice
}
