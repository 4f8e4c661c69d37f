// The command line of every program follows the conventions a user expects and refuses
// nonsense: --version, flag values that make no sense, unknown subcommands, output that cannot
// be written, a missing model, and the dev/test sets of a run's own config (--subset, --print).
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <optional>
#include <string>
#include <vector>

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include "apps/app_fixtures.h"
#include "core/build_info.h"
#include "dnnl/onednn_info.h"

using namespace attn::testing;
using nlohmann::json;

namespace {

const std::vector<std::string> kPrograms = {"attn-train",          "attn-translate", "attn-score",   "attn-tokenize",
                                            "attn-dump-attention", "attn-bench",     "attn-average", "attn-quantize",
                                            "attn-align",          "attn-export"};

// Runs a shell command; its standard output, or nothing when it fails.
std::optional<std::string> shell_output(const TempDir& dir, const std::string& command) {
  const std::string out = dir.file("shell.out");
  if (std::system((command + " > " + quoted(out) + " 2>/dev/null").c_str()) != 0) return std::nullopt;
  std::string text = read_text(out);
  while (!text.empty() && text.back() == '\n') text.pop_back();
  return text;
}

// The generated build info of a source tree: what cmake/build_info.cmake writes for `source`.
std::string build_info_for(const TempDir& dir, const std::string& source) {
  const std::string out = dir.file("build_info.cpp");
  const std::string command = quoted(ATTN_CMAKE_COMMAND) + " -DSOURCE_DIR=" + quoted(source) +
                              " -DOUTPUT=" + quoted(out) + " -DVERSION=9.8.7 -P " +
                              quoted(std::string(ATTN_SOURCE_DIR) + "/cmake/build_info.cmake");
  REQUIRE(std::system(command.c_str()) == 0);
  return read_text(out);
}

}  // namespace

TEST_CASE("every program answers --version with attn's version - commit - oneDNN and its ISA - without other flags",
          "[cli][version]") {
  TempDir dir;
  for (const std::string& program : kPrograms) {
    INFO(program);
    Result result = run_program(dir, program, "--version");
    INFO("stderr:\n" << result.err);
    CHECK(result.exit_code == 0);
    CHECK(result.err.empty());
    CHECK_THAT(result.out, Catch::StartsWith(program + " (attn " + attn::version() + ")\n"));
    CHECK_THAT(result.out, Catch::Contains("git commit: " + std::string(attn::git_commit()) + "\n"));
    CHECK_THAT(result.out, Catch::Contains("oneDNN: " + attn::dnn::onednn_version() + "\n"));
    CHECK_THAT(result.out, Catch::Contains("oneDNN CPU ISA: " + attn::dnn::cpu_isa_name() + "\n"));
  }
  CHECK(std::string(attn::version()) != "");
  CHECK_THAT(attn::dnn::onednn_version(), Catch::Matches(R"(\d+\.\d+\.\d+.*)"));
  CHECK_THAT(attn::dnn::cpu_isa_name(), !Catch::StartsWith("isa 0x"));  // an ISA the table names
  // The binaries were built from this checkout's current commit (none when git is absent).
  if (auto head = shell_output(dir, "git -C " + quoted(ATTN_SOURCE_DIR) + " rev-parse --short=12 HEAD")) {
    INFO("the checkout is at " << *head << ": build again after a commit, before the tests");
    CHECK_THAT(attn::git_commit(), Catch::StartsWith(*head));
  }
}

TEST_CASE("the build info follows the checkout's commit - and says unknown outside a git checkout", "[cli][version]") {
  TempDir dir;
  const std::string repo = dir.file("repo");
  std::filesystem::create_directories(repo);
  CHECK_THAT(build_info_for(dir, repo), Catch::Contains("\"unknown\"") && Catch::Contains("\"9.8.7\""));
  const std::string git = "git -C " + quoted(repo) + " -c user.name=t -c user.email=t@t.invalid ";
  if (!shell_output(dir, git + "init -q")) {
    WARN("git is not installed: only the case without a checkout is tested");
    return;
  }
  auto commit = [&](const std::string& text) {
    std::ofstream(repo + "/file.txt") << text;
    REQUIRE(shell_output(dir, git + "add file.txt && " + git + "commit -q -m " + text));
    return *shell_output(dir, git + "rev-parse --short=12 HEAD");
  };
  const std::string first = commit("one");
  CHECK_THAT(build_info_for(dir, repo), Catch::Contains("\"" + first + "\""));
  const std::string second = commit("two");  // a new commit, nothing reconfigured
  CHECK_THAT(build_info_for(dir, repo), Catch::Contains("\"" + second + "\""));
  std::ofstream(repo + "/file.txt") << "edited";
  CHECK_THAT(build_info_for(dir, repo), Catch::Contains("\"" + second + "-dirty\""));
  // A directory inside a checkout is not the checkout: its commit would be someone else's.
  std::filesystem::create_directories(repo + "/inner");
  CHECK_THAT(build_info_for(dir, repo + "/inner"), Catch::Contains("\"unknown\""));
}

TEST_CASE("numeric flags that make no sense are errors that name the flag", "[cli]") {
  TempDir dir;
  struct Case {
    std::string program, arguments, flag;
  };
  const std::vector<Case> cases = {
      {"attn-translate", "--beam 0", "--beam"},
      {"attn-translate", "--batch-size -1", "--batch-size"},
      {"attn-translate", "--nbest 0", "--nbest"},
      {"attn-translate", "--length-penalty -5", "--length-penalty"},
      {"attn-translate", "--threads 0", "--threads"},
      {"attn-translate", "--min-length -1", "--min-length"},
      {"attn-translate", "--no-repeat-ngram -2", "--no-repeat-ngram"},
      {"attn-average", "--out a.safetensors --last 0", "--last"},
      {"attn-dump-attention", "--src s.txt --beam 0", "--beam"},
      {"attn-dump-attention", "--src s.txt --batch-size 0", "--batch-size"},
      {"attn-dump-attention", "--src s.txt --layer -1", "--layer"},
      {"attn-dump-attention", "--src s.txt --head -2", "--head"},
      {"attn-dump-attention", "--src s.txt --threads -1", "--threads"},
      {"attn-bench", "train --config c.json --steps 0", "--steps"},
      {"attn-bench", "train --config c.json --steps -1", "--steps"},
      {"attn-bench", "train --config c.json --warmup -1", "--warmup"},
      {"attn-bench", "train --config c.json --batch-sentences 0", "--batch-sentences"},
      {"attn-bench", "train --config c.json --src-len 0", "--src-len"},
      {"attn-bench", "train --config c.json --tgt-len -3", "--tgt-len"},
      {"attn-bench", "train --config c.json --threads 0", "--threads"},
      {"attn-bench", "grad --config c.json --output g.safetensors --batch-sentences 0", "--batch-sentences"},
      {"attn-bench", "grad --config c.json --output g.safetensors --src-len 1", "--src-len"},
      {"attn-bench", "grad --config c.json --output g.safetensors --tgt-len 0", "--tgt-len"},
      {"attn-translate", "--repetition-penalty 0", "--repetition-penalty"},
      {"attn-bench", "decode --beam 0", "--beam"},
      {"attn-bench", "decode --batch-size 0", "--batch-size"},
      {"attn-bench", "decode --sentences 0", "--sentences"},
      {"attn-bench", "decode --src-len 0", "--src-len"},
      {"attn-tokenize", "train --input a --model-prefix p --vocab-size 0", "--vocab-size"},
      {"attn-tokenize", "train --input a --model-prefix p --character-coverage 0", "--character-coverage"},
      {"attn-tokenize", "train --input a --model-prefix p --character-coverage 1.5", "--character-coverage"},
      {"attn-tokenize", "train --input a --model-prefix p --max-sentences 0", "--max-sentences"},
  };
  for (const Case& c : cases) {
    INFO(c.program << " " << c.arguments);
    check_refused(run_program(dir, c.program, c.arguments), c.flag + ": must be ");
  }
  check_refused(run_program(dir, "attn-translate", "--beam abc"), "--beam");
}

TEST_CASE("attn-bench train with no timed step is an error - not a crash", "[cli]") {
  TempDir dir;
  const std::string config = write_tiny_setup(dir);
  for (const std::string steps : {"0", "-1"}) {
    Result result = run_program(dir, "attn-bench", "train --config " + quoted(config) + " --steps " + steps);
    check_refused(result, "--steps: must be at least 1; got " + steps);
  }
}

TEST_CASE("an unknown subcommand is named and the valid ones listed", "[cli]") {
  TempDir dir;
  check_refused(run_program(dir, "attn-bench", "bogus"),
                "unknown subcommand 'bogus'; valid subcommands: train, decode");
  check_refused(run_program(dir, "attn-bench", "bogus --steps 3"), "unknown subcommand 'bogus'");
  check_refused(run_program(dir, "attn-tokenize", "tokenise"),
                "unknown subcommand 'tokenise'; valid subcommands: train, encode, decode");
  check_refused(run_program(dir, "attn-bench", ""), "a subcommand is required: train, decode");
}

TEST_CASE("every program fails with a message when its standard output cannot be written", "[cli]") {
  TempDir dir;
  const std::string config = write_tiny_setup(dir);
  const std::string valid_tgt = quoted(dir.file("valid.tgt"));
  Result vocab =
      run_program(dir, "attn-tokenize",
                  "train --input " + valid_tgt + " --model-prefix " + quoted(dir.file("spm")) + " --vocab-size 40");
  INFO("attn-tokenize train stderr:\n" << vocab.err);
  REQUIRE(vocab.exit_code == 0);
  const std::string spm = quoted(dir.file("spm.model"));
  write_lines(dir.file("pieces.txt"), {"▁a b c", "d e"});
  struct Case {
    std::string program, arguments, input;
  };
  const std::vector<Case> cases = {
      {"attn-score", "--ref " + valid_tgt + " --hyp " + valid_tgt, "/dev/null"},
      {"attn-score", "--ref " + valid_tgt + " --json", dir.file("valid.tgt")},
      {"attn-tokenize", "encode --model " + spm, dir.file("valid.tgt")},
      {"attn-tokenize", "decode --model " + spm, dir.file("pieces.txt")},
      {"attn-train", "--config " + quoted(config) + " --dump-config", "/dev/null"},
      {"attn-train", "--config " + quoted(config) + " --print output_dir", "/dev/null"},
      {"attn-bench", "decode --config " + quoted(config) + " --sentences 2 --beam 1", "/dev/null"},
      {"attn-translate", "--help", "/dev/null"},
      {"attn-bench", "--version", "/dev/null"},
  };
  for (const Case& c : cases) {
    INFO(c.program << " " << c.arguments);
    Result ok = run_program(dir, c.program, c.arguments, c.input);  // the same run works with a writable stdout
    INFO("stderr with a file:\n" << ok.err);
    CHECK(ok.exit_code == 0);
    CHECK_FALSE(ok.out.empty());
    Result full = run_to(dir, "/dev/full", c.program, c.arguments, c.input);
    check_refused(full, "cannot write to standard output");
  }
}

TEST_CASE("without --model the error says where the programs looked and what to pass", "[cli]") {
  TempDir dir;
  std::filesystem::create_directories(dir.file("empty"));
  const std::string here = "cd " + quoted(dir.file("empty")) + " && env -u ATTN_MODEL";
  write_lines(dir.file("s.txt"), {"kan"});
  const std::vector<std::pair<std::string, std::string>> programs = {
      {"attn-translate", ""},
      {"attn-dump-attention", "--src " + quoted(dir.file("s.txt"))},
      {"attn-bench", "decode"},
      {"attn-score", "--subset test --hyp " + quoted(dir.file("s.txt"))}};
  for (const auto& [program, arguments] : programs) {
    INFO(program);
    check_refused(run_program(dir, program, arguments, "/dev/null", here),
                  "no model: --model is not given, $ATTN_MODEL is not set, and the default run 'runs/en-it' (there "
                  "is no configs/en-it.json here either) does not exist in " +
                      dir.file("empty") + "; pass --model RUN_DIR");
  }
  // A configs/en-it.json names the default run by its output_dir.
  std::filesystem::create_directories(dir.file("empty/configs"));
  std::ofstream(dir.file("empty/configs/en-it.json")) << R"({"output_dir": "runs/elsewhere"})";
  check_refused(run_program(dir, "attn-translate", "", "/dev/null", here),
                "the default run 'runs/elsewhere' (output_dir of configs/en-it.json) does not exist");
  // $ATTN_MODEL is named when it is what pointed nowhere.
  check_refused(run_program(dir, "attn-translate", "", "/dev/null", "ATTN_MODEL=" + quoted(dir.file("nothing"))),
                "$ATTN_MODEL is '" + dir.file("nothing") + "', which is not a directory");
}

TEST_CASE("attn-translate and attn-score --subset - attn-train --print: a run's own test set read through attn",
          "[cli]") {
  TempDir dir;
  const std::string config = write_tiny_setup(dir);
  const std::string run_dir = dir.file("run");
  const std::string test_set =
      " --set data.test_src=" + dir.file("valid.src") + " --set data.test_tgt=" + dir.file("valid.tgt");

  // --print: one resolved value, overrides included, strings without quotes.
  Result printed = run_program(dir, "attn-train", "--config " + quoted(config) + test_set + " --print output_dir");
  INFO("--print stderr:\n" << printed.err);
  CHECK(printed.exit_code == 0);
  CHECK(printed.out == run_dir + "\n");
  Result number =
      run_program(dir, "attn-train", "--config " + quoted(config) + " --set train.max_steps=7 --print train.max_steps");
  CHECK(number.out == "7\n");
  Result section = run_program(dir, "attn-train", "--config " + quoted(config) + " --print model.transformer");
  CHECK(json::parse(section.out).at("d_model") == 16);
  check_refused(run_program(dir, "attn-train", "--config " + quoted(config) + " --print model.trasnformer.d_model"),
                "unknown config key model.trasnformer; did you mean model.transformer?");

  Result trained =
      run_program(dir, "attn-train", "--config " + quoted(config) + test_set + " --set train.max_steps=10");
  INFO("attn-train stderr:\n" << trained.err);
  REQUIRE(trained.exit_code == 0);
  const std::string model = "--model " + quoted(run_dir);

  // --subset test translates data.test_src, exactly as the file on standard input would be.
  Result subset = run_program(dir, "attn-translate", model + " --subset test --quiet");
  INFO("attn-translate --subset stderr:\n" << subset.err);
  REQUIRE(subset.exit_code == 0);
  Result piped = run_program(dir, "attn-translate", model + " --quiet", dir.file("valid.src"));
  CHECK(subset.out == piped.out);
  CHECK(split_lines(subset.out).size() == split_lines(read_text(dir.file("valid.src"))).size());
  Result dev = run_program(dir, "attn-translate", model + " --subset dev --quiet");
  CHECK(dev.out == piped.out);  // data.valid_src is the same file here
  // Without --model, from elsewhere: $ATTN_MODEL names the run.
  Result by_env =
      run_program(dir, "attn-translate", "--subset test --quiet", "/dev/null", "cd / && ATTN_MODEL=" + quoted(run_dir));
  CHECK(by_env.out == piped.out);
  // attn-dump-attention, too, fails when its standard output cannot be written.
  check_refused(run_to(dir, "/dev/full", "attn-dump-attention", model + " --src " + quoted(dir.file("valid.src"))),
                "cannot write to standard output");
  write_lines(dir.file("hyp.txt"), split_lines(subset.out));

  // attn-score --subset test takes the reference from data.test_tgt.
  Result scored =
      run_program(dir, "attn-score", model + " --subset test --hyp " + quoted(dir.file("hyp.txt")) + " --json");
  INFO("attn-score --subset stderr:\n" << scored.err);
  REQUIRE(scored.exit_code == 0);
  Result by_file =
      run_program(dir, "attn-score",
                  "--ref " + quoted(dir.file("valid.tgt")) + " --hyp " + quoted(dir.file("hyp.txt")) + " --json");
  CHECK(json::parse(scored.out) == json::parse(by_file.out));

  // A config without a test set says which key to set; --subset and --input exclude each other.
  Result no_tests =
      run_program(dir, "attn-train",
                  "--config " + quoted(config) + " --set output_dir=" + dir.file("run2") + " --set train.max_steps=1");
  REQUIRE(no_tests.exit_code == 0);
  check_refused(run_program(dir, "attn-translate", "--model " + quoted(dir.file("run2")) + " --subset test"),
                "--subset test: data.test_src is not set in " + dir.file("run2") + "/config.json");
  check_refused(run_program(dir, "attn-score", "--model " + quoted(dir.file("run2")) + " --subset test"),
                "--subset test: data.test_tgt is not set in " + dir.file("run2") + "/config.json");
  check_refused(run_program(dir, "attn-translate", model + " --subset test --input x"), "--subset");
  check_refused(run_program(dir, "attn-score", "--hyp x"), "give the reference: --ref FILE, or --subset dev|test");
}

TEST_CASE("a flag that sets a config key shows the key's default and allowed values - and is checked by its reader",
          "[cli]") {
  TempDir dir;
  const Result help = run_program(dir, "attn-translate", "--help");
  REQUIRE(help.exit_code == 0);
  CHECK_THAT(help.out, Catch::Contains("(default: the run's decode.beam, declared default 5; allowed: >= 1)"));
  CHECK_THAT(help.out, Catch::Contains("decode.length_penalty, declared default 2.0; allowed: >= 0"));
  const Result serve_help = run_program(dir, "attn-serve", "--help");
  CHECK_THAT(serve_help.out, Catch::Contains("(default: the run's train.threads, declared default 2; allowed: >= 1)"));
  // A value its key does not take: one line naming the flag, in the config reader's words.
  check_refused(run_program(dir, "attn-translate", "--beam 0"), "--beam: must be >= 1; got 0");
  check_refused(run_program(dir, "attn-translate", "--beam 2.5"), "--beam: expected an integer, got 2.5");
  check_refused(run_program(dir, "attn-serve", "--threads 0"), "--threads: must be >= 1; got 0");

  // Every key, without a config file.
  const Result table = run_program(dir, "attn-train", "--help-config");
  INFO(table.err);
  REQUIRE(table.exit_code == 0);
  CHECK_THAT(table.out, Catch::Contains("decode.beam") && Catch::Contains("train.precision") &&
                            Catch::Contains("\"f32\", \"bf16\", \"auto\""));
}
