// attn-average, --checkpoint and attn-translate --sample from the command line, on one tiny
// run that keeps its step checkpoints (train.keep_checkpoints).
#include <filesystem>
#include <string>
#include <vector>

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include "apps/app_fixtures.h"

using namespace attn::testing;
using nlohmann::json;
namespace fs = std::filesystem;

TEST_CASE(
    "attn-average averages a run's last checkpoints for attn-translate --checkpoint and attn-translate --sample "
    "repeats with its seed",
    "[cli][average][sampling]") {
  TempDir dir;
  const std::string config = write_tiny_setup(dir, {{"keep_checkpoints", 3}, {"save_every", 10}, {"ema_decay", 0.5}});
  const std::string run_dir = dir.file("run");
  const std::string model = "--model " + quoted(run_dir);
  Result trained = run_program(dir, "attn-train", "--config " + quoted(config));
  INFO("attn-train stderr:\n" << trained.err);
  REQUIRE(trained.exit_code == 0);
  // Saved at steps 10, 20, 30 and 40; the newest 3 kept.
  for (int step : {10, 20, 30, 40})
    CHECK(fs::exists(run_dir + "/checkpoint.step-" + std::to_string(step) + ".safetensors") == (step != 10));

  const std::vector<std::string> valid = split_lines(read_text(dir.file("valid.src")));
  write_lines(dir.file("input.txt"), {valid[0], valid[1], valid[2]});
  const std::string average = dir.file("average.safetensors");

  SECTION("--last N then --checkpoint in attn-translate and attn-dump-attention") {
    Result averaged = run_program(dir, "attn-average", model + " --last 2 --out " + quoted(average));
    INFO("attn-average stderr:\n" << averaged.err);
    REQUIRE(averaged.exit_code == 0);
    CHECK_THAT(averaged.err, Catch::Contains("averaged 2 checkpoints"));
    Result translated =
        run_program(dir, "attn-translate", model + " --checkpoint " + quoted(average), dir.file("input.txt"));
    INFO("attn-translate stderr:\n" << translated.err);
    REQUIRE(translated.exit_code == 0);
    CHECK(split_lines(translated.out).size() == 3);
    Result dumped = run_program(dir, "attn-dump-attention",
                                model + " --checkpoint " + quoted(average) + " --src " + quoted(dir.file("input.txt")));
    INFO("attn-dump-attention stderr:\n" << dumped.err);
    CHECK(dumped.exit_code == 0);

    Result again = run_program(dir, "attn-average", model + " --last 2 --out " + quoted(average));
    CHECK(again.exit_code != 0);
    CHECK_THAT(again.err, Catch::Contains(average) && Catch::Contains("--force"));
    CHECK(run_program(dir, "attn-average", model + " --last 2 --force --out " + quoted(average)).exit_code == 0);
  }
  SECTION("files named on the command line - and --last more than there are") {
    Result averaged =
        run_program(dir, "attn-average",
                    "--out " + quoted(average) + " " + quoted(run_dir + "/checkpoint.step-30.safetensors") + " " +
                        quoted(run_dir + "/checkpoint.step-40.safetensors"));
    INFO("attn-average stderr:\n" << averaged.err);
    CHECK(averaged.exit_code == 0);
    Result too_many = run_program(dir, "attn-average", model + " --last 5 --out " + quoted(dir.file("x.safetensors")));
    CHECK(too_many.exit_code != 0);
    CHECK_THAT(too_many.err, Catch::Contains("has only 3"));
    CHECK_FALSE(fs::exists(dir.file("x.safetensors")));
    Result missing = run_program(dir, "attn-translate", model + " --checkpoint " + quoted(dir.file("none.safetensors")),
                                 dir.file("input.txt"));
    CHECK(missing.exit_code != 0);
    CHECK_THAT(missing.err, Catch::Contains("none.safetensors"));
  }
  SECTION("--sample: the same seed gives the same output") {
    const std::string sample = model + " --sample --temperature 3 --top-k 20";
    Result first = run_program(dir, "attn-translate", sample + " --seed 5", dir.file("input.txt"));
    INFO("attn-translate stderr:\n" << first.err);
    REQUIRE(first.exit_code == 0);
    CHECK(split_lines(first.out).size() == 3);
    Result second = run_program(dir, "attn-translate", sample + " --seed 5 --batch-size 1", dir.file("input.txt"));
    CHECK(second.out == first.out);
    Result beam = run_program(dir, "attn-translate", model + " --sample --beam 3", dir.file("input.txt"));
    CHECK(beam.exit_code != 0);
    Result no_sample = run_program(dir, "attn-translate", model + " --top-k 3", dir.file("input.txt"));
    CHECK(no_sample.exit_code != 0);
  }
}
