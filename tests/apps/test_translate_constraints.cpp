// attn-translate's decoding constraints (decode/logits_processor.h) from the command line and
// from the run's config: --min-length / decode.min_length, --no-repeat-ngram /
// decode.no_repeat_ngram, the flag overriding the config.
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

}  // namespace

TEST_CASE("attn-translate --min-length and --no-repeat-ngram constrain every search - over the config's decode.*",
          "[cli][logits_processor]") {
  TempDir dir;
  const std::string config_path = write_tiny_setup(dir);
  json config = json::parse(read_text(config_path));
  config["decode"]["min_length"] = 12;  // the run decodes with it unless a flag says otherwise
  std::ofstream(config_path) << config.dump(2) << '\n';
  Result trained = run_program(dir, "attn-train", "--config " + quoted(config_path));
  INFO("attn-train stderr:\n" << trained.err);
  REQUIRE(trained.exit_code == 0);

  const std::vector<std::string> valid = split_lines(read_text(dir.file("valid.src")));
  const std::vector<std::string> input(valid.begin(), valid.begin() + 6);
  write_lines(dir.file("input.txt"), input);
  const std::string model = "--model " + quoted(dir.file("run")) + " --quiet";
  auto translate = [&](const std::string& flags) {
    Result result = run_program(dir, "attn-translate", model + " " + flags, dir.file("input.txt"));
    INFO("attn-translate " << flags << " stderr:\n" << result.err);
    REQUIRE(result.exit_code == 0);
    std::vector<std::string> lines = split_lines(result.out);
    REQUIRE(lines.size() == input.size());
    return lines;
  };

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
