// End-to-end tests of the programs: attn-train on a tiny synthetic corpus, then attn-translate
// and attn-score on its run directory, and attn-train's answers to bad configs. Each program
// runs through std::system with stdout and stderr redirected to files in a temporary directory
// (apps/app_fixtures.h).
#include <algorithm>
#include <filesystem>
#include <map>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include "apps/app_fixtures.h"
#include "csv_rows.h"

using namespace attn::testing;
using nlohmann::json;

TEST_CASE("attn-train - attn-translate and attn-score work end to end on a tiny corpus", "[cli]") {
  TempDir dir;
  const std::string config = write_tiny_setup(dir);
  const std::string run_dir = dir.file("run");

  Result trained = run_program(dir, "attn-train", "--config " + quoted(config));
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
      for (const char* key : {"loss", "ppl", "lr", "grad_norm", "tokens_per_s", "epoch", "rss_mb"})
        CHECK(record.contains(key));
  }

  SECTION("--resume continues from the last checkpoint and the log's steps continue") {
    Result resumed =
        run_program(dir, "attn-train", "--config " + quoted(config) + " --resume --set train.max_steps=60");
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
    Result translated = run_program(dir, "attn-translate", "--model " + quoted(run_dir), dir.file("input.txt"));
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
        run_program(dir, "attn-translate", "--model " + quoted(run_dir) + " --beam 3 --nbest 2", dir.file("input.txt"));
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
        run_program(dir, "attn-score",
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
    Result result = run_program(dir, "attn-train", "--config " + quoted(dir.file("missing.json")));
    CHECK(result.exit_code != 0);
    CHECK(result.out.empty());
    CHECK(split_lines(result.err).size() == 1);
    CHECK_THAT(result.err, Catch::Contains("missing.json"));
  }
  SECTION("a misspelt key in --set") {
    const std::string config = write_tiny_setup(dir);
    Result result = run_program(dir, "attn-train", "--config " + quoted(config) + " --set model.trasnformer.d_model=8");
    CHECK(result.exit_code != 0);
    CHECK(split_lines(result.err).size() == 1);
    CHECK_THAT(result.err, Catch::Contains("model.trasnformer") && Catch::Contains("did you mean model.transformer"));
    CHECK(!std::filesystem::exists(dir.file("run")));  // nothing was started
  }
}

TEST_CASE("attn-dump-attention writes forced and free attention as tidy CSV - and hard alignments", "[cli]") {
  const std::string family = GENERATE(as<std::string>{}, "transformer", "rnn");
  INFO("model " << family);
  TempDir dir;
  const std::string config = write_tiny_setup(dir, json::object(), family);
  const std::string model = "--model " + quoted(dir.file("run"));
  Result trained = run_program(dir, "attn-train", "--config " + quoted(config) + " --set train.max_steps=20");
  INFO("attn-train stderr:\n" << trained.err);
  REQUIRE(trained.exit_code == 0);

  const std::vector<std::string> src = split_lines(read_text(dir.file("valid.src")));
  const std::vector<std::string> tgt = split_lines(read_text(dir.file("valid.tgt")));
  write_lines(dir.file("s.txt"), {src[0], src[1], "", src[2]});
  write_lines(dir.file("t.txt"), {tgt[0], tgt[1], "", tgt[2]});
  const std::string files = " --src " + quoted(dir.file("s.txt")) + " --tgt " + quoted(dir.file("t.txt"));
  const int64_t heads = family == "transformer" ? 2 : 1;
  const std::set<std::string> kinds =
      family == "transformer" ? std::set<std::string>{"enc_self", "cross", "dec_self"} : std::set<std::string>{"cross"};

  // Every dump: rows sum to 1, the non-empty lines appear, and each map has queries x keys rows
  // (the lengths read from the cross rows' largest positions; the key at the last one is </s>).
  auto check_dump = [&](const std::string& text) {
    std::vector<attn::testing::AttentionRow> rows = attn::testing::parse_attention_csv(text);
    CHECK(attn::testing::worst_row_sum_error(rows) < 1e-5);
    std::map<int64_t, int64_t> source_length, target_length;
    std::set<std::string> seen_kinds;
    for (const auto& row : rows) {
      seen_kinds.insert(row.kind);
      if (row.kind != "cross") continue;
      source_length[row.sentence] = std::max(source_length[row.sentence], row.key_pos + 1);
      target_length[row.sentence] = std::max(target_length[row.sentence], row.query_pos + 1);
    }
    CHECK(seen_kinds == kinds);
    size_t expected = 0;
    std::set<int64_t> sentences;
    for (const auto& [s, ls] : source_length) {
      sentences.insert(s);
      int64_t n = target_length[s];
      expected += heads * (family == "transformer" ? ls * ls + n * ls + n * n : n * ls);
    }
    CHECK(sentences == std::set<int64_t>{0, 1, 3});  // line 2 is empty
    CHECK(rows.size() == expected);
    for (const auto& row : rows) {
      if (row.kind == "cross" && row.key_pos == source_length[row.sentence] - 1) CHECK(row.key_token == "</s>");
      if (row.kind != "enc_self" && row.query_pos == 0) CHECK(row.query_token != "<s>");  // queries are outputs
      CHECK(row.key_token != "<pad>");
    }
  };

  {  // forced on the reference, to --out
    Result dumped = run_program(dir, "attn-dump-attention", model + files + " --out " + quoted(dir.file("att.csv")));
    INFO("forced stderr:\n" << dumped.err);
    REQUIRE(dumped.exit_code == 0);
    CHECK(dumped.out.empty());
    const std::string text = read_text(dir.file("att.csv"));
    CHECK(text.substr(0, text.find('\n')) == "sentence,kind,layer,head,query_pos,query_token,key_pos,key_token,weight");
    check_dump(text);
  }
  for (const std::string beam : {"", " --beam 2"}) {  // free: the model's own translation, to stdout
    Result dumped = run_program(dir, "attn-dump-attention", model + " --src " + quoted(dir.file("s.txt")) + beam);
    INFO("free" << beam << " stderr:\n" << dumped.err);
    REQUIRE(dumped.exit_code == 0);
    check_dump(dumped.out);
  }
  {  // one mean map per sentence
    Result dumped = run_program(dir, "attn-dump-attention", model + files + " --kind cross --layer 0 --average-heads");
    INFO("--average-heads stderr:\n" << dumped.err);
    REQUIRE(dumped.exit_code == 0);
    std::vector<attn::testing::AttentionRow> rows = attn::testing::parse_attention_csv(dumped.out);
    CHECK(attn::testing::worst_row_sum_error(rows) < 1e-5);
    CHECK(!rows.empty());
    for (const auto& row : rows) CHECK((row.kind == "cross" && row.head == "mean"));
  }
  {  // one Pharaoh line per input line
    Result aligned = run_program(dir, "attn-dump-attention", model + files + " --alignments");
    INFO("--alignments stderr:\n" << aligned.err);
    REQUIRE(aligned.exit_code == 0);
    std::vector<std::string> lines = split_lines(aligned.out);
    REQUIRE(lines.size() == 4);
    CHECK(lines[2].empty());
    const std::regex pharaoh(R"(^(\d+-\d+( \d+-\d+)*)?$)");
    for (const auto& line : lines) CHECK(std::regex_match(line, pharaoh));
    // Pieces: at least as many positions as words, so links reach at least as far.
    Result pieces = run_program(dir, "attn-dump-attention", model + files + " --alignments pieces --alignment-shift 1");
    REQUIRE(pieces.exit_code == 0);
    CHECK(split_lines(pieces.out).size() == 4);
    // attn-translate: "translation ||| links", every link inside the source's and output's words.
    Result translated =
        run_program(dir, "attn-translate",
                    model + " --input " + quoted(dir.file("s.txt")) + " --alignments --alignment-layer -1 --quiet");
    INFO("attn-translate --alignments stderr:\n" << translated.err);
    REQUIRE(translated.exit_code == 0);
    const std::vector<std::string> outputs = split_lines(translated.out);
    REQUIRE(outputs.size() == 4);
    const std::vector<std::string> inputs = {src[0], src[1], "", src[2]};
    for (size_t i = 0; i < outputs.size(); ++i) {
      const size_t bar = outputs[i].find(" ||| ");
      REQUIRE(bar != std::string::npos);
      const std::string text = outputs[i].substr(0, bar), links = outputs[i].substr(bar + 5);
      CHECK(std::regex_match(links, pharaoh));
      std::istringstream words_in(inputs[i]), words_out(text), link_stream(links);
      const auto count = [](std::istringstream& in) {
        int64_t n = 0;
        for (std::string word; in >> word;) ++n;
        return n;
      };
      const int64_t source_words = count(words_in), output_words = count(words_out);
      for (std::string link; link_stream >> link;) {
        CHECK(std::stoll(link.substr(0, link.find('-'))) < source_words);
        CHECK(std::stoll(link.substr(link.find('-') + 1)) < output_words);
      }
    }
    check_refused(run_program(dir, "attn-translate", model + " --alignments --nbest 2 --beam 2"), "excludes");
    check_refused(run_program(dir, "attn-dump-attention", model + files + " --alignments --alignment-layer 5"),
                  "out of range");
  }
  {  // errors in one line: a layer out of range, line counts that differ
    Result layer = run_program(dir, "attn-dump-attention", model + files + " --kind cross --layer 3");
    CHECK(layer.exit_code != 0);
    CHECK(split_lines(layer.err).size() == 1);
    CHECK_THAT(layer.err, Catch::Contains("layer 3 is out of range") && Catch::Contains("1 layer"));
    write_lines(dir.file("short.txt"), {tgt[0]});
    Result counts =
        run_program(dir, "attn-dump-attention",
                    model + " --src " + quoted(dir.file("s.txt")) + " --tgt " + quoted(dir.file("short.txt")));
    CHECK(counts.exit_code != 0);
    CHECK(split_lines(counts.err).size() == 1);
    CHECK_THAT(counts.err, Catch::Contains("s.txt has 4 lines") && Catch::Contains("short.txt has 1"));
  }
}
