// attn-translate streams, as Marian and fairseq-interactive do: a line is answered as soon as
// the input pauses, memory does not grow with the input, --input/--output files (the output
// complete or not at all), a summary at the end, and a progress line when stderr is a terminal.
#include <algorithm>
#include <chrono>
#include <csignal>
#include <fcntl.h>
#include <filesystem>
#include <fstream>
#include <poll.h>
#include <stdlib.h>
#include <string>
#include <thread>
#include <unistd.h>
#include <vector>

#include <catch2/catch.hpp>

#include "apps/app_fixtures.h"
#include "skip.h"
#include "wait_until.h"

using namespace attn::testing;
using nlohmann::json;

namespace {

// A tiny trained run in dir/run (a few steps: these tests need a model, not a good one).
std::string train_tiny_run(const TempDir& dir) {
  const std::string config = write_tiny_setup(dir);
  Result trained = run_program(dir, "attn-train", "--config " + quoted(config) + " --set train.max_steps=10");
  INFO("attn-train stderr:\n" << trained.err);
  REQUIRE(trained.exit_code == 0);
  return dir.file("run");
}

// Everything a pseudo-terminal's master has to read now.
std::string drain(int master) {
  std::string text;
  char buffer[4096];
  pollfd descriptor{master, POLLIN, 0};
  while (::poll(&descriptor, 1, 100) > 0) {
    ssize_t n = ::read(master, buffer, sizeof(buffer));
    if (n <= 0) break;
    text.append(buffer, size_t(n));
  }
  return text;
}

}  // namespace

TEST_CASE("attn-translate answers a line as soon as its input pauses - not at the end of the input", "[cli][stream]") {
  TempDir dir;
  const std::string run_dir = train_tiny_run(dir);
  const std::vector<std::string> valid = split_lines(read_text(dir.file("valid.src")));

  // (echo LINE; sleep; echo LINE) | attn-translate: the first answer must come while the
  // input is still open and its second line not yet written.
  PipedChild child(dir, "attn-translate", {"--model", run_dir, "--quiet"});
  child.write(valid[0] + "\n");
  std::optional<std::string> first = child.read_line(20.0);  // model loading included
  INFO("stderr:\n" << read_text(dir.file("child.err")));
  REQUIRE(first.has_value());
  child.write("\n" + valid[1] + "\n");  // an empty line keeps its place
  std::optional<std::string> second = child.read_line(10.0), third = child.read_line(10.0);
  REQUIRE(second.has_value());
  REQUIRE(third.has_value());
  CHECK(second->empty());
  child.close_input();
  CHECK_FALSE(child.read_line(10.0).has_value());  // nothing more: one line per input line
  CHECK(child.wait() == 0);

  // The same lines in one go give the same translations, in input order.
  write_lines(dir.file("in.txt"), {valid[0], "", valid[1]});
  Result whole = run_program(dir, "attn-translate", "--model " + quoted(run_dir) + " --quiet", dir.file("in.txt"));
  CHECK(whole.out == *first + "\n\n" + *third + "\n");
}

TEST_CASE("attn-translate keeps memory bounded by its window - not by the input", "[cli][stream]") {
  TempDir dir;
  const std::string run_dir = train_tiny_run(dir);
  // Lines of 4 KiB of spaces: each is read and kept until its window is written, but encodes to
  // nothing, so the test spends its time on memory, not on decoding.
  const std::string blank(4096, ' ');
  auto peak_rss_kb = [&](int lines) {
    std::ofstream input(dir.file("blank.txt"));
    for (int i = 0; i < lines; ++i) input << blank << '\n';
    input.close();
    pid_t pid =
        spawn(dir, "attn-translate",
              {"--model", run_dir, "--quiet", "--input", dir.file("blank.txt"), "--output", dir.file("out.txt")});
    int64_t peak = 0;
    REQUIRE(wait_for(pid, &peak) == 0);
    CHECK(read_text(dir.file("out.txt")) == std::string(size_t(lines), '\n'));
    return peak;
  };
  const int64_t small = peak_rss_kb(100), large = peak_rss_kb(10000);  // 0.4 MiB and 40 MiB of input
  INFO("peak RSS: " << small << " KiB for 100 lines, " << large << " KiB for 10000");
#if defined(__SANITIZE_ADDRESS__) || defined(ATTN_SANITIZED)
  // AddressSanitizer keeps freed blocks in a quarantine of up to 256 MiB, so the resident size
  // of a sanitized build grows with everything it ever freed: only the release build measures.
  WARN("AddressSanitizer build: the memory bound is checked by the release build only");
#else
  CHECK(large - small < 16 * 1024);
#endif
}

TEST_CASE("attn-translate --input and --output: the output file is complete or not there", "[cli][stream]") {
  TempDir dir;
  const std::string run_dir = train_tiny_run(dir);
  const std::string model = "--model " + quoted(run_dir);
  const std::string output = dir.file("out.txt");

  Result piped = run_program(dir, "attn-translate", model + " --quiet", dir.file("valid.src"));
  REQUIRE(piped.exit_code == 0);
  Result files = run_program(dir, "attn-translate",
                             model + " --input " + quoted(dir.file("valid.src")) + " --output " + quoted(output));
  INFO("stderr:\n" << files.err);
  REQUIRE(files.exit_code == 0);
  CHECK(files.out.empty());
  CHECK(read_text(output) == piped.out);
  // The summary: lines, target tokens, seconds and sentences/s (--quiet drops it).
  CHECK_THAT(files.err,
             Catch::Matches(R"((.|\n)*translated 20 lines \(\d+ target tokens\) in [0-9.]+ s: [0-9.]+ sentences/s\n)"));
  CHECK(piped.err.empty());

  // A failure leaves an existing output file as it was, and no temporary file behind.
  std::ofstream(output) << "old\n";
  Result missing = run_program(dir, "attn-translate",
                               model + " --input " + quoted(dir.file("nope.txt")) + " --output " + quoted(output));
  CHECK(missing.exit_code != 0);
  CHECK_THAT(missing.err, Catch::Contains("cannot open '" + dir.file("nope.txt") + "'"));
  Result unreadable = run_program(dir, "attn-translate",
                                  model + " --input " + quoted(dir.path().string()) + " --output " + quoted(output));
  CHECK(unreadable.exit_code != 0);
  CHECK_THAT(unreadable.err, Catch::Contains("error while reading '" + dir.path().string() + "'"));
  CHECK(read_text(output) == "old\n");
  CHECK_FALSE(std::filesystem::exists(output + ".tmp"));

  // Killed halfway through (some windows written): still the old file.
  PipedChild child(dir, "attn-translate", {"--model", run_dir, "--output", output, "--batch-size", "1"});
  const std::vector<std::string> valid = split_lines(read_text(dir.file("valid.src")));
  for (int i = 0; i < 80; ++i) child.write(valid[i % valid.size()] + "\n");  // 5 windows of 16
  // Wait until part of the translation is in the temporary file, then kill it.
  auto written = [&] {
    std::error_code error;
    return std::filesystem::file_size(output + ".tmp", error) > 0 && !error;
  };
  REQUIRE(wait_until(written, 20));
  ::kill(child.pid(), SIGKILL);
  CHECK(child.wait() == -SIGKILL);
  CHECK(read_text(output) == "old\n");
}

TEST_CASE("attn-translate shows a progress line when stderr is a terminal - and only then", "[cli][stream]") {
  TempDir dir;
  const std::string run_dir = train_tiny_run(dir);
  const std::vector<std::string> valid = split_lines(read_text(dir.file("valid.src")));
  int master = posix_openpt(O_RDWR | O_NOCTTY);
  REQUIRE(master >= 0);
  REQUIRE(grantpt(master) == 0);
  REQUIRE(unlockpt(master) == 0);
  const std::string terminal = ptsname(master);

  for (bool on_terminal : {true, false}) {
    INFO("stderr on a terminal: " << on_terminal);
    const std::string err = on_terminal ? terminal : dir.file("child.err");
    PipedChild child(dir, "attn-translate", {"--model", run_dir}, err);
    // Two windows more than a second apart: a long input, as far as progress is concerned.
    child.write(valid[0] + "\n");
    REQUIRE(child.read_line(20.0).has_value());
    std::this_thread::sleep_for(std::chrono::milliseconds(1100));
    child.write(valid[1] + "\n");
    REQUIRE(child.read_line(10.0).has_value());
    CHECK(child.wait() == 0);
    const std::string text = on_terminal ? drain(master) : read_text(err);
    INFO("stderr:\n" << text);
    CHECK_THAT(text, Catch::Contains("translated 2 lines"));  // the summary, either way
    if (on_terminal)
      CHECK_THAT(text, Catch::Contains("\r2 lines translated, "));
    else
      CHECK_THAT(text, !Catch::Contains("lines translated"));
  }
  ::close(master);
}

TEST_CASE("attn-translate --batch-tokens: the same translations in input order - a bad budget named in one line",
          "[cli][stream]") {
  TempDir dir;
  const std::string run_dir = train_tiny_run(dir);
  std::vector<std::string> lines = split_lines(read_text(dir.file("valid.src")));
  lines.resize(std::min<size_t>(lines.size(), 40));
  for (size_t i = 0; i + 2 < lines.size(); i += 5) lines[i] += " " + lines[i + 1] + " " + lines[i + 2];  // long ones
  write_lines(dir.file("in.txt"), lines);
  const std::string model = "--model " + quoted(run_dir) + " --quiet --beam 3 --batch-size 8";
  auto translate = [&](const std::string& flags) {
    Result result = run_program(dir, "attn-translate", model + " " + flags, dir.file("in.txt"));
    INFO("attn-translate " << flags << " stderr:\n" << result.err);
    REQUIRE(result.exit_code == 0);
    REQUIRE(split_lines(result.out).size() == lines.size());
    return result.out;
  };
  const std::string unbounded = translate("--batch-tokens 0");
  CHECK(translate("--batch-tokens 20") == unbounded);  // small batches, the long lines alone
  CHECK(translate("") == unbounded);                   // the run's decode.batch_tokens

  check_refused(run_program(dir, "attn-translate", model + " --batch-tokens -1", dir.file("in.txt")), "--batch-tokens");
  check_refused(run_program(dir, "attn-bench", "decode --model " + quoted(run_dir) + " --batch-tokens -5"),
                "--batch-tokens");
  // A config with a bad decode.batch_tokens is refused with the key named.
  json config = json::parse(read_text(dir.file("run/config.json")));
  config["decode"]["batch_tokens"] = -3;
  std::ofstream(dir.file("run/config.json")) << config.dump(2) << '\n';
  check_refused(run_program(dir, "attn-translate", model, dir.file("in.txt")), "decode.batch_tokens");
}

TEST_CASE("tools/bench-decode-memory.sh tables the peak RSS of three inputs - before and after", "[cli][stream]") {
  ATTN_SKIP_UNLESS(std::system("test -x /usr/bin/time") == 0, "no /usr/bin/time, which the script runs");
  TempDir dir;
  const std::string run_dir = train_tiny_run(dir);
  // The script's data layout, filled with the tiny corpus' sentences.
  const std::string valid = read_text(dir.file("valid.src"));
  for (const std::string corpus : {"tatoeba_en_it", "iwslt17_en_it"}) {
    std::filesystem::create_directories(dir.file("data/" + corpus));
    std::ofstream(dir.file("data/" + corpus + "/test.en")) << valid;
  }
  const std::string apps = quoted(kApps.substr(0, kApps.size() - 1));
  const std::string command = "bash " + quoted(std::string(ATTN_SOURCE_DIR) + "/tools/bench-decode-memory.sh") + " " +
                              quoted(run_dir) + " --bin " + apps + " --baseline " + apps + " --data " +
                              quoted(dir.file("data")) + " --lines 8 --beam 2 --threads 1 --outputs " +
                              quoted(dir.file("outputs")) + " > " + quoted(dir.file("table.md")) + " 2> " +
                              quoted(dir.file("table.err"));
  const int status = std::system(command.c_str());
  const std::string table = read_text(dir.file("table.md"));
  INFO("stdout:\n" << table << "\nstderr:\n" << read_text(dir.file("table.err")));
  REQUIRE(status == 0);
  for (const std::string row : {"| Tatoeba test | 8 |", "| IWSLT17 test | 8 |", "| IWSLT17 test, 4 lines joined |"})
    CHECK_THAT(table, Catch::Contains(row));
  CHECK_THAT(table, Catch::Contains("after / before"));
  // The same build twice: the same translations.
  CHECK(read_text(dir.file("outputs/long.after.txt")) == read_text(dir.file("outputs/long.before.txt")));
  CHECK(split_lines(read_text(dir.file("outputs/tatoeba.after.txt"))).size() == 8);

  // A failing attn-translate stops it with a message (a run directory without a model).
  std::filesystem::create_directories(dir.file("empty_run"));
  const std::string failing = "bash " + quoted(std::string(ATTN_SOURCE_DIR) + "/tools/bench-decode-memory.sh") + " " +
                              quoted(dir.file("empty_run")) + " --bin " + apps + " --data " + quoted(dir.file("data")) +
                              " > /dev/null 2> " + quoted(dir.file("fail.err"));
  CHECK(std::system(failing.c_str()) != 0);
  CHECK_THAT(read_text(dir.file("fail.err")), Catch::Contains("attn-translate failed"));
}
