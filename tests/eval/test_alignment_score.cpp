// Word alignment scores (eval/alignment_score.h) on hand-made links.
#include <catch2/catch.hpp>

#include "core/check.h"
#include "eval/alignment_score.h"

using namespace attn::eval;

TEST_CASE("alignment lines: sure i-j - possible i?j and ipj - the last tab field", "[eval][alignment]") {
  const AlignmentLinks links = parse_alignment_line("0-1 2?3  4p5 0-1");
  CHECK(links.sure == std::set<AlignmentLink>{{0, 1}});
  CHECK(links.possible == std::set<AlignmentLink>{{2, 3}, {4, 5}});
  CHECK(parse_alignment_line("a b\tc d\t0-0 1-1").sure == std::set<AlignmentLink>{{0, 0}, {1, 1}});
  CHECK(parse_alignment_line("").sure.empty());
  CHECK(parse_alignment_line("1-1 1?1").possible.empty());  // marked both ways: sure
  for (const char* bad : {"0-", "a-1", "1-2-3", "-1-2", "0:1", "1x2"})
    CHECK_THROWS_WITH(parse_alignment_line(bad), Catch::Contains(std::string("'") + bad + "'"));
}

TEST_CASE("precision - recall - F1 and AER by hand with sure and possible links", "[eval][alignment]") {
  // S = {0-0, 1-1}, P = S + {2-2}, A = {0-0, 2-2, 3-3}: |A∩S| = 1, |A∩P| = 2
  //   precision 2/3, recall 1/2, F1 4/7, AER = 1 - (1 + 2) / (3 + 2) = 2/5
  const AlignmentScore s = score_alignments({"0-0 1-1 2?2"}, {"0-0 2-2 3-3"}, "gold", "pred");
  CHECK(s.precision == Approx(2.0 / 3));
  CHECK(s.recall == Approx(0.5));
  CHECK(s.f1 == Approx(4.0 / 7));
  CHECK(s.aer == Approx(0.4));
  CHECK(s.counts.possible == 3);
  CHECK(s.format() ==
        "AER = 0.4000 precision = 0.6667 recall = 0.5000 F1 = 0.5714 (sentences = 1 predicted = 3 "
        "sure = 2 possible = 3)\n");
  // Two sentences sum their counts: + (S = {0-0}, A = {}) -> |A| 3, |S| 3, AER = 1 - 3/6
  const AlignmentScore two = score_alignments({"0-0 1-1 2?2", "0-0"}, {"0-0 2-2 3-3", ""}, "gold", "pred");
  CHECK(two.aer == Approx(0.5));
  CHECK(two.recall == Approx(1.0 / 3));
  CHECK(score_alignments({""}, {""}, "g", "p").aer == 0.0);  // no link at all: no error
  CHECK(score_alignments({"0-0"}, {"0-0"}, "g", "p").aer == 0.0);
}

TEST_CASE("alignment errors name the file and line - or both files", "[eval][alignment]") {
  CHECK_THROWS_WITH(score_alignments({"0-0", "1-1"}, {"0-0", "1-x"}, "'g.txt'", "'p.txt'"),
                    Catch::Contains("'p.txt' line 2: bad alignment link '1-x'"));
  CHECK_THROWS_WITH(score_alignments({"0-0"}, {"0-0", "1-1"}, "'g.txt'", "'p.txt'"),
                    Catch::Contains("'p.txt' have 2") && Catch::Contains("'g.txt' have 1"));
  CHECK_THROWS_AS(score_alignments({}, {}, "g", "p"), attn::Error);
}
