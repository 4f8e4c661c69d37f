// attn-translate's decoding constraints and processors (decode/logits_processor.h) from the
// command line and from the run's config: --min-length / decode.min_length, --no-repeat-ngram /
// decode.no_repeat_ngram, --repetition-penalty / decode.repetition_penalty, --prefix /
// decode.prefix, the flag overriding the config.
#include <fstream>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include "apps/app_fixtures.h"

using namespace attn::testing;
using nlohmann::json;

namespace {

std::vector<std::string> words_of(const std::string& line) {
  std::istringstream stream(line);
  std::vector<std::string> words;
  for (std::string word; stream >> word;) words.push_back(word);
  return words;
}

size_t word_count(const std::vector<std::string>& lines) {
  size_t count = 0;
  for (const auto& line : lines) count += words_of(line).size();
  return count;
}

bool repeats_a_word(const std::string& line) {
  std::set<std::string> seen;
  for (const auto& word : words_of(line))
    if (!seen.insert(word).second) return true;
  return false;
}

// A tiny run trained with one decode.* key set in its config, and attn-translate on six of its
// dev lines.
class ConstrainedRun {
 public:
  ConstrainedRun(const std::string& key, const json& value) {
    const std::string config_path = write_tiny_setup(dir_);
    json config = json::parse(read_text(config_path));
    config["decode"][key] = value;  // the run decodes with it unless a flag says otherwise
    std::ofstream(config_path) << config.dump(2) << '\n';
    Result trained = run_program(dir_, "attn-train", "--config " + quoted(config_path));
    INFO("attn-train stderr:\n" << trained.err);
    REQUIRE(trained.exit_code == 0);
    const std::vector<std::string> valid = split_lines(read_text(dir_.file("valid.src")));
    write_lines(dir_.file("input.txt"), std::vector<std::string>(valid.begin(), valid.begin() + kLines));
  }

  Result run(const std::string& flags) const {
    return run_program(dir_, "attn-translate", "--model " + quoted(dir_.file("run")) + " --quiet " + flags,
                       dir_.file("input.txt"));
  }

  // One output line per input line.
  std::vector<std::string> translate(const std::string& flags) const {
    Result result = run(flags);
    INFO("attn-translate " << flags << " stderr:\n" << result.err);
    REQUIRE(result.exit_code == 0);
    std::vector<std::string> lines = split_lines(result.out);
    REQUIRE(lines.size() == kLines);
    return lines;
  }

 private:
  static constexpr size_t kLines = 6;
  TempDir dir_;
};

}  // namespace

TEST_CASE("attn-translate --min-length and --no-repeat-ngram constrain every search - over the config's decode.*",
          "[cli][logits_processor]") {
  const ConstrainedRun run("min_length", 12);
  auto translate = [&](const std::string& flags) { return run.translate(flags); };

  const std::vector<std::string> free = translate("--min-length 0");
  const std::vector<std::string> from_config = translate("");
  CHECK(translate("--min-length 12") == from_config);
  CHECK(from_config != free);
  CHECK(word_count(from_config) > word_count(free));
  for (const std::string search : {"--beam 3", "--sample --seed 3"}) {
    INFO(search);
    CHECK(word_count(translate(search)) > word_count(translate(search + " --min-length 0")));
  }

  int repeating_before = 0;  // lines the constraint must change
  for (const std::string search : {"--beam 1", "--beam 3", "--sample --seed 3"}) {
    INFO(search);
    for (const std::string& line : translate(search)) repeating_before += repeats_a_word(line);
    for (const std::string& line : translate(search + " --no-repeat-ngram 1")) {
      INFO(line);
      CHECK_FALSE(repeats_a_word(line));
    }
  }
  CHECK(repeating_before >= 1);
}

TEST_CASE("attn-translate --prefix and --repetition-penalty in every search - over the config's decode.*",
          "[cli][logits_processor]") {
  const ConstrainedRun run("prefix", "ake");  // a target word of the synthetic corpus
  auto translate = [&](const std::string& flags) { return run.translate(flags); };
  // The prefix is pieces: the model may go on within its last word ("ake" -> "akes").
  auto all_start_with = [](const std::vector<std::string>& lines, const std::string& prefix) {
    for (const std::string& line : lines) {
      INFO(line);
      if (line.rfind(prefix, 0) != 0) return false;
    }
    return true;
  };

  int changed_by_penalty = 0;  // lines a strong penalty changes, over the three searches
  for (const std::string search : {"--beam 1", "--beam 3", "--sample --seed 3"}) {
    INFO(search);
    const std::vector<std::string> from_config = translate(search);
    CHECK(all_start_with(from_config, "ake"));
    CHECK(all_start_with(translate(search + " --prefix ite"), "ite"));
    CHECK(translate(search + " --prefix ''") != from_config);
    CHECK(translate(search + " --repetition-penalty 1") == from_config);
    const std::vector<std::string> penalised = translate(search + " --repetition-penalty 20");
    CHECK(all_start_with(penalised, "ake"));  // the prefix is forced whatever the penalty
    for (size_t i = 0; i < penalised.size(); ++i) changed_by_penalty += penalised[i] != from_config[i];
  }
  CHECK(changed_by_penalty >= 1);
  // Beam search's scores: the penalty acts on the prefix's tokens, which every hypothesis holds.
  const Result plain = run.run("--beam 3 --nbest 2"), penalised = run.run("--beam 3 --nbest 2 --repetition-penalty 2");
  REQUIRE(plain.exit_code == 0);
  REQUIRE(penalised.exit_code == 0);
  CHECK(penalised.out != plain.out);

  Result bad = run.run("--repetition-penalty 0");
  CHECK(bad.exit_code != 0);
  CHECK_THAT(bad.err, Catch::Contains("--repetition-penalty"));
}
