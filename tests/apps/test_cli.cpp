// End-to-end tests of the programs: attn-train on a tiny synthetic corpus, then attn-translate
// and attn-score on its run directory, and attn-train's answers to bad configs. Each program
// runs through std::system with stdout and stderr redirected to files in a temporary directory
// (apps/app_fixtures.h).
#include <algorithm>
#include <filesystem>
#include <regex>
#include <string>
#include <vector>

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include "apps/app_fixtures.h"

using namespace attn::testing;
using nlohmann::json;

TEST_CASE("attn-train, attn-translate and attn-score work end to end on a tiny corpus", "[cli]") {
  TempDir dir;
  const std::string config = write_tiny_setup(dir);
  const std::string run_dir = dir.file("run");

  Result trained = run(dir, "attn-train", "--config " + quoted(config));
  INFO("attn-train stderr:\n" << trained.err);
  REQUIRE(trained.exit_code == 0);
  CHECK(trained.out.empty());  // logs go to stderr
  for (const char* name :
       {"config.json", "spm.model", "checkpoint.best.safetensors", "checkpoint.last.safetensors", "train.log.jsonl"})
    CHECK(std::filesystem::exists(run_dir + "/" + name));
  const std::string log = run_dir + "/train.log.jsonl";
  CHECK(logged_steps(log, "train") == std::vector<int64_t>{10, 20, 30, 40});
  CHECK(logged_steps(log, "valid") == std::vector<int64_t>{20, 40});
  for (const auto& line : split_lines(read_text(log))) {
    json record = json::parse(line);
    if (record.at("type") == "valid")
      for (const char* key : {"loss", "ppl", "bleu", "chrf", "best"}) CHECK(record.contains(key));
    else
      for (const char* key : {"loss", "ppl", "lr", "grad_norm", "tokens_per_s", "epoch"}) CHECK(record.contains(key));
  }

  SECTION("--resume continues from the last checkpoint and the log's steps continue") {
    Result resumed = run(dir, "attn-train", "--config " + quoted(config) + " --resume --set train.max_steps=60");
    INFO("attn-train --resume stderr:\n" << resumed.err);
    REQUIRE(resumed.exit_code == 0);
    CHECK_THAT(resumed.err, Catch::Contains("resumed from") && Catch::Contains("at step 40"));
    CHECK(logged_steps(log, "train") == std::vector<int64_t>{10, 20, 30, 40, 50, 60});
    CHECK(logged_steps(log, "valid") == std::vector<int64_t>{20, 40, 60});
  }

  const std::vector<std::string> valid = split_lines(read_text(dir.file("valid.src")));
  const std::vector<std::string> input = {valid[0], valid[1], "", "  \t ", valid[2], valid[3]};
  write_lines(dir.file("input.txt"), input);

  SECTION("attn-translate: one output line per input line, an empty line for an empty one") {
    Result translated = run(dir, "attn-translate", "--model " + quoted(run_dir), dir.file("input.txt"));
    INFO("attn-translate stderr:\n" << translated.err);
    REQUIRE(translated.exit_code == 0);
    std::vector<std::string> output = split_lines(translated.out);
    REQUIRE(output.size() == input.size());
    CHECK(std::count(translated.out.begin(), translated.out.end(), '\n') == long(input.size()));
    CHECK(output[2].empty());
    CHECK(output[3].empty());
    // The model has learnt enough to say something: the empty outputs above are not a given.
    int spoken = 0;
    for (size_t i = 0; i < output.size(); ++i) spoken += i != 2 && i != 3 && !output[i].empty();
    CHECK(spoken >= 1);
  }

  SECTION("attn-translate --nbest: N lines 'index ||| text ||| score' per input line, best first") {
    Result translated =
        run(dir, "attn-translate", "--model " + quoted(run_dir) + " --beam 3 --nbest 2", dir.file("input.txt"));
    INFO("attn-translate stderr:\n" << translated.err);
    REQUIRE(translated.exit_code == 0);
    std::vector<std::string> output = split_lines(translated.out);
    REQUIRE(output.size() == 2 * input.size());
    const std::regex format(R"(^(\d+) \|\|\| (.*) \|\|\| (\S+)$)");
    for (size_t i = 0; i < output.size(); ++i) {
      INFO("line " << i << ": " << output[i]);
      std::smatch match;
      REQUIRE(std::regex_match(output[i], match, format));
      size_t index = std::stoul(match[1]);
      double score = std::stod(match[3]);
      CHECK(index == i / 2);
      CHECK(score <= 0.0);
      if (i % 2 == 1) CHECK(std::stod(output[i - 1].substr(output[i - 1].rfind(' ') + 1)) >= score);
      if (index == 2 || index == 3) {  // the empty and the whitespace-only line
        CHECK(match[2].str().empty());
        CHECK(score == 0.0);
      }
    }
  }

  SECTION("attn-score gives BLEU 100 and chrF 100 for a file against itself") {
    Result scored =
        run(dir, "attn-score",
            "--ref " + quoted(dir.file("valid.tgt")) + " --hyp " + quoted(dir.file("valid.tgt")) + " --json");
    INFO("attn-score stderr:\n" << scored.err);
    REQUIRE(scored.exit_code == 0);
    json report = json::parse(scored.out);
    CHECK(report.at("bleu").get<double>() == Approx(100.0));
    CHECK(report.at("chrf").get<double>() == Approx(100.0));
  }
}

TEST_CASE("attn-train reports a bad config in one line that names the file or the key", "[cli]") {
  TempDir dir;
  SECTION("a missing config file") {
    Result result = run(dir, "attn-train", "--config " + quoted(dir.file("missing.json")));
    CHECK(result.exit_code != 0);
    CHECK(result.out.empty());
    CHECK(split_lines(result.err).size() == 1);
    CHECK_THAT(result.err, Catch::Contains("missing.json"));
  }
  SECTION("a misspelt key in --set") {
    const std::string config = write_tiny_setup(dir);
    Result result = run(dir, "attn-train", "--config " + quoted(config) + " --set model.trasnformer.d_model=8");
    CHECK(result.exit_code != 0);
    CHECK(split_lines(result.err).size() == 1);
    CHECK_THAT(result.err, Catch::Contains("model.trasnformer") && Catch::Contains("did you mean model.transformer"));
    CHECK(!std::filesystem::exists(dir.file("run")));  // nothing was started
  }
}
