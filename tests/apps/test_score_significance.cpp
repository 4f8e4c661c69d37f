// attn-score's --paired-bs, --confidence, --chrf-word-order and --alignments as a user runs them.
#include <string>
#include <vector>

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include "apps/app_fixtures.h"

using namespace attn::testing;
using nlohmann::json;

TEST_CASE("attn-score --paired-bs and --confidence report means - intervals - p-values", "[cli][score]") {
  TempDir dir;
  const std::vector<std::string> ref = {"the cat sat on the mat", "a dog ran in the park", "it is raining today"};
  write_lines(dir.file("ref"), ref);
  write_lines(dir.file("base"), {"the cat sat", "a dog ran", "it is raining"});
  write_lines(dir.file("sys"), ref);
  const std::string common = "--ref " + quoted(dir.file("ref")) + " --hyp " + quoted(dir.file("base"));
  Result paired = run_program(dir, "attn-score", common + " --hyp " + quoted(dir.file("sys")) + " --paired-bs --json");
  INFO("stderr:\n" << paired.err);
  REQUIRE(paired.exit_code == 0);
  const json report = json::parse(paired.out);
  CHECK(report.at("resamples") == 1000);
  CHECK(report.at("seed") == 12345);
  CHECK(report.at("systems").at(0).at("baseline") == true);
  CHECK_FALSE(report.at("systems").at(0).contains("bleu_p_value"));
  CHECK(report.at("systems").at(1).at("bleu").get<double>() == Approx(100.0));
  CHECK(report.at("systems").at(1).contains("chrf_p_value"));
  Result again = run_program(dir, "attn-score", common + " --hyp " + quoted(dir.file("sys")) + " --paired-bs --json");
  CHECK(again.out == paired.out);  // seeded

  Result text =
      run_program(dir, "attn-score", common + " --hyp " + quoted(dir.file("sys")) + " --paired-bs-n 20 --paired-bs");
  CHECK_THAT(text.out, Catch::Contains("20 resamples") && Catch::Contains("Baseline: "));

  Result confidence = run_program(dir, "attn-score", common + " --confidence --confidence-n 50 --seed 3 --json");
  REQUIRE(confidence.exit_code == 0);
  const json c = json::parse(confidence.out);
  CHECK(c.at("bleu_signature").get<std::string>().rfind("nrefs:1|bs:50|seed:3|", 0) == 0);
  CHECK(c.contains("bleu_mean"));
  CHECK(c.contains("chrf_ci"));

  check_refused(run_program(dir, "attn-score", common + " --paired-bs"), "--paired-bs: give the baseline");
  check_refused(run_program(dir, "attn-score", common + " --hyp " + quoted(dir.file("sys"))), "--hyp: give one file");
  check_refused(run_program(dir, "attn-score", common + " --hyp " + quoted(dir.file("missing")) + " --paired-bs"),
                "missing");
}

TEST_CASE("attn-score --chrf-word-order 2 is chrF++ - and the default JSON keeps its keys", "[cli][score]") {
  TempDir dir;
  write_lines(dir.file("ref"), {"a cat"});
  write_lines(dir.file("hyp"), {"a cat."});
  const std::string common = "--ref " + quoted(dir.file("ref")) + " --hyp " + quoted(dir.file("hyp"));
  Result plus = run_program(dir, "attn-score", common + " --chrf-word-order 2");
  CHECK_THAT(plus.out, Catch::Contains("chrF2++ = 90.17") && Catch::Contains("|nw:2|"));
  const json plain = json::parse(run_program(dir, "attn-score", common + " --json").out);
  std::vector<std::string> keys;
  for (const auto& item : plain.items()) keys.push_back(item.key());
  CHECK(keys == std::vector<std::string>{"bleu", "bleu_signature", "bleu_verbose", "bp", "chrf", "chrf_signature",
                                         "hyp_len", "precisions", "ratio", "ref_len"});
  CHECK(plain.at("chrf").get<double>() == Approx(81500.0 / 892));
  check_refused(run_program(dir, "attn-score", common + " --chrf-word-order 7"), "--chrf-word-order");
}

TEST_CASE("attn-score --alignments scores Pharaoh links - XL-WA lines - and names bad input", "[cli][score]") {
  TempDir dir;
  write_lines(dir.file("gold.tsv"), {"a b c\tx y z\t0-0 1-1 2?2", "d\tw\t0-0"});
  write_lines(dir.file("pred"), {"0-0 2-2 3-3", ""});
  Result scored =
      run_program(dir, "attn-score",
                  "--alignments " + quoted(dir.file("gold.tsv")) + " --hyp " + quoted(dir.file("pred")) + " --json");
  INFO("stderr:\n" << scored.err);
  REQUIRE(scored.exit_code == 0);
  const json report = json::parse(scored.out);
  CHECK(report.at("aer").get<double>() == Approx(0.5));
  CHECK(report.at("precision").get<double>() == Approx(2.0 / 3));
  CHECK(report.at("sure_links") == 3);

  write_lines(dir.file("bad"), {"0-0", "1+1"});
  check_refused(run_program(dir, "attn-score",
                            "--alignments " + quoted(dir.file("gold.tsv")) + " --hyp " + quoted(dir.file("bad"))),
                "line 2: bad alignment link '1+1'");
  write_lines(dir.file("short"), {"0-0"});
  check_refused(run_program(dir, "attn-score",
                            "--alignments " + quoted(dir.file("gold.tsv")) + " --hyp " + quoted(dir.file("short"))),
                "line counts differ");
  check_refused(
      run_program(dir, "attn-score", "--alignments " + quoted(dir.file("none")) + " --hyp " + quoted(dir.file("pred"))),
      "cannot open");
  check_refused(run_program(dir, "attn-score", "--alignments " + quoted(dir.file("gold.tsv")) + " --paired-bs"),
                "excludes");
}
