// attn-align as a user runs it: Pharaoh lines for every line pair, the same bytes on any
// --threads, each direction and the symmetrisation, and bad input refused in one line.
#include <regex>

#include <catch2/catch.hpp>

#include "app_fixtures.h"

using namespace attn::testing;

TEST_CASE("attn-align writes one Pharaoh line per pair - the same on any thread count - and refuses bad input",
          "[cli][align]") {
  TempDir dir;
  const Corpus corpus = synthetic_corpus(60, 7);
  write_lines(dir.file("a.src"), corpus.src);
  write_lines(dir.file("a.tgt"), corpus.tgt);
  const std::string files = "--src " + quoted(dir.file("a.src")) + " --tgt " + quoted(dir.file("a.tgt"));
  const std::string outputs = " --forward-out " + quoted(dir.file("f")) + " --reverse-out " + quoted(dir.file("r"));
  Result one = run_program(dir, "attn-align", files + " --threads 1 --iterations 3" + outputs);
  INFO("stderr:\n" << one.err);
  REQUIRE(one.exit_code == 0);
  const std::vector<std::string> lines = split_lines(one.out);
  REQUIRE(lines.size() == corpus.src.size());
  const std::regex pharaoh(R"(^(\d+-\d+( \d+-\d+)*)?$)");
  for (const auto& line : lines) CHECK(std::regex_match(line, pharaoh));
  CHECK(split_lines(read_text(dir.file("f"))).size() == corpus.src.size());
  Result two = run_program(dir, "attn-align", files + " --threads 2 --iterations 3 --quiet");
  REQUIRE(two.exit_code == 0);
  CHECK(two.out == one.out);
  CHECK(two.err.empty());
  Result forward = run_program(dir, "attn-align", files + " --threads 2 --iterations 3 --forward --quiet");
  REQUIRE(forward.exit_code == 0);
  CHECK(forward.out == read_text(dir.file("f")));  // one direction trained alone gives the same links
  Result intersection = run_program(dir, "attn-align", files + " --iterations 3 --symmetrize intersection --quiet");
  REQUIRE(intersection.exit_code == 0);
  CHECK(split_lines(intersection.out).size() == corpus.src.size());

  write_lines(dir.file("short.tgt"), {corpus.tgt[0], corpus.tgt[1]});
  check_refused(
      run_program(dir, "attn-align", "--src " + quoted(dir.file("a.src")) + " --tgt " + quoted(dir.file("short.tgt"))),
      "has 2 lines");
  check_refused(
      run_program(dir, "attn-align", "--src " + quoted(dir.file("none")) + " --tgt " + quoted(dir.file("a.tgt"))),
      "cannot open");
  check_refused(run_program(dir, "attn-align", files + " --reverse --symmetrize union"), "excludes");
}
