// attn-dump-attention --choose-alignment as a user runs it: every extraction ranked against
// reference links, the best saved as the run's alignment.json, which attn-dump-attention and
// attn-translate then read as their default while each flag given still wins.
#include <filesystem>
#include <string>
#include <vector>

#include <catch2/catch.hpp>

#include "apps/app_fixtures.h"

using namespace attn::testing;

namespace {

std::string run_ok(const TempDir& dir, const std::string& program, const std::string& args) {
  Result result = run_program(dir, program, args);
  INFO(program << " " << args << "\nstderr:\n" << result.err);
  REQUIRE(result.exit_code == 0);
  return result.out;
}

}  // namespace

TEST_CASE(
    "attn-dump-attention --choose-alignment ranks every extraction - saves the best - which becomes the run's default",
    "[cli][align]") {
  TempDir dir;
  const std::string config = write_tiny_setup(dir);
  run_ok(dir, "attn-train", "--config " + quoted(config) + " --set train.max_steps=20");
  const std::vector<std::string> src = split_lines(read_text(dir.file("valid.src")));
  const std::vector<std::string> tgt = split_lines(read_text(dir.file("valid.tgt")));
  write_lines(dir.file("s.txt"), {src[0], src[1], "", src[2]});
  write_lines(dir.file("t.txt"), {tgt[0], tgt[1], "", tgt[2]});
  const std::string model = "--model " + quoted(dir.file("run"));
  const std::string files = " --src " + quoted(dir.file("s.txt")) + " --tgt " + quoted(dir.file("t.txt"));
  const std::string own_file = dir.file("run/alignment.json");
  // The reference: one extraction's own links, so that it ranks at AER 0.
  const std::string chosen_flags = " --alignment-layer 0 --alignment-head 1 --alignment-shift 1 --alignment-words any";
  const std::string reference = run_ok(dir, "attn-dump-attention", model + files + " --alignments" + chosen_flags);
  write_lines(dir.file("ref.txt"), split_lines(reference));
  const std::string builtin = run_ok(dir, "attn-dump-attention", model + files + " --alignments");

  const std::string ranking = run_ok(
      dir, "attn-dump-attention", model + files + " --choose-alignment " + quoted(dir.file("ref.txt")) + " --no-save");
  const std::vector<std::string> rows = split_lines(ranking);
  REQUIRE(rows.size() == 1 + (1 + 2) * 2 * 2);  // header, then 1 layer x (mean + 2 heads) x 2 shifts x 2 linkings
  CHECK(rows[0] == "rank\tAER\tprecision\trecall\textraction");
  CHECK(rows[1].rfind("1\t0.0000\t1.0000\t1.0000\t", 0) == 0);
  CHECK_FALSE(std::filesystem::exists(own_file));

  Result saved =
      run_program(dir, "attn-dump-attention", model + files + " --choose-alignment " + quoted(dir.file("ref.txt")));
  INFO("stderr:\n" << saved.err);
  REQUIRE(saved.exit_code == 0);
  CHECK(saved.out == ranking);
  CHECK_THAT(saved.err, Catch::Contains("alignment.json"));
  REQUIRE(std::filesystem::exists(own_file));
  CHECK_THAT(read_text(own_file), Catch::Contains("\"reference\""));

  // The saved choice is the default now; flags given override it field by field.
  CHECK(run_ok(dir, "attn-dump-attention", model + files + " --alignments") == reference);
  CHECK(run_ok(dir, "attn-dump-attention",
               model + files +
                   " --alignments --alignment-layer -1 --alignment-head mean --alignment-shift 0 --alignment-words "
                   "mean") == builtin);
  const std::string input = " --input " + quoted(dir.file("s.txt")) + " --quiet --alignments";
  CHECK(run_ok(dir, "attn-translate", model + input) == run_ok(dir, "attn-translate", model + input + chosen_flags));

  // Bad input: one line naming the file and line, the flag, or the run's file.
  write_lines(dir.file("bad.txt"), {"0-0", "0-x", "", "0-0"});
  check_refused(
      run_program(dir, "attn-dump-attention", model + files + " --choose-alignment " + quoted(dir.file("bad.txt"))),
      "bad.txt' line 2: bad alignment link '0-x'");
  write_lines(dir.file("short.txt"), {"0-0"});
  check_refused(
      run_program(dir, "attn-dump-attention", model + files + " --choose-alignment " + quoted(dir.file("short.txt"))),
      "--choose-alignment");
  check_refused(
      run_program(dir, "attn-dump-attention",
                  model + " --src " + quoted(dir.file("s.txt")) + " --choose-alignment " + quoted(dir.file("ref.txt"))),
      "--tgt");
  check_refused(run_program(dir, "attn-dump-attention",
                            model + files + " --alignments --choose-alignment " + quoted(dir.file("ref.txt"))),
                "excludes");
  write_lines(own_file, {R"({"layer": 0, "head": 9, "shfit": 1})"});
  check_refused(run_program(dir, "attn-translate", model + input), "unknown key \"shfit\"");
  CHECK(run_program(dir, "attn-translate", model + " --input " + quoted(dir.file("s.txt")) + " --quiet").exit_code ==
        0);
}
