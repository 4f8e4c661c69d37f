// chrF++ (sacreBLEU's --chrf-word-order 2): word n-grams as further orders of chrF's average.
#include <catch2/catch.hpp>

#include "core/check.h"
#include "eval/chrf.h"

using attn::eval::ChrfScore;
using attn::eval::corpus_chrf;

TEST_CASE("chrF++ hand example: words lose their final punctuation", "[eval][chrf]") {
  // hyp "a cat." vs ref "a cat"; characters "acat." vs "acat":
  //   n=1: 4/5 (P), 4/4 (R);  n=2: 3/4, 3/3;  n=3: 2/3, 2/2;  n=4: 1/2, 1/1;  n=5: the ref has none -> skipped
  // words [a, cat, .] vs [a, cat]:  w=1: 2/3, 2/2;  w=2: "a cat" "cat ." vs "a cat": 1/2, 1/1
  //   P = (4/5 + 3/4 + 2/3 + 1/2 + 2/3 + 1/2) / 6 = 233/360,  R = 1
  //   chrF++ = 100 * 5 P R / (4 P + R) = 100 * 1165 / 1292 = 90.17
  const ChrfScore plus = corpus_chrf({"a cat."}, {"a cat"}, 2);
  CHECK(plus.precision == Approx(233.0 / 360));
  CHECK(plus.recall == Approx(1.0));
  CHECK(plus.score == Approx(116500.0 / 1292));
  CHECK(plus.format() == "chrF2++ = 90.17");
  // chrF2 of the same pair: P = (4/5 + 3/4 + 2/3 + 1/2) / 4 = 163/240 -> 100 * 815 / 892
  const ChrfScore plain = corpus_chrf({"a cat."}, {"a cat"});
  CHECK(plain.score == Approx(81500.0 / 892));
  CHECK(plain.format() == "chrF2 = 91.37");
  CHECK(corpus_chrf({"a cat."}, {"a cat"}, 0).score == plain.score);
}

TEST_CASE("chrF++ splits one punctuation mark - the last or else the first - as sacreBLEU does", "[eval][chrf]") {
  // hyp "x (hi)" -> [x, (hi, )];  ref "x (hi )" -> [x, (, hi, )]  (sacreBLEU's bug report 124)
  // characters "x(hi)" on both sides: orders 1..5 match fully (P = R = 1), order 6 is empty
  //   w=1: match {x, )} = 2 -> 2/3, 2/4;  w=2: no match -> 0/2, 0/3
  //   P = (5 + 2/3) / 7 = 17/21,  R = (5 + 1/2) / 7 = 11/14,  chrF++ = 100 * 935 / 1183
  CHECK(corpus_chrf({"x (hi)"}, {"x (hi )"}, 2).score == Approx(93500.0 / 1183));
  // A punctuation mark after a multi-byte character comes off whole; a one-character word stays.
  CHECK(corpus_chrf({"é."}, {"é ."}, 2).score == Approx(100.0));
  CHECK(corpus_chrf({"."}, {"."}, 2).score == Approx(100.0));
}

TEST_CASE("chrF word order 1 adds unigrams only - and the signature and name show the order", "[eval][chrf]") {
  // "b a" vs "a b": characters "ba" vs "ab": n=1 2/2; n=2 0/1; words: w=1 2/2
  //   P = R = (1 + 0 + 1) / 3 = 2/3 -> 66.67
  const ChrfScore one = corpus_chrf({"b a"}, {"a b"}, 1);
  CHECK(one.score == Approx(200.0 / 3));
  CHECK(one.name() == "chrF2+");
  CHECK(one.signature().rfind("nrefs:1|case:mixed|eff:yes|nc:6|nw:1|space:no|version:", 0) == 0);
  CHECK(corpus_chrf({"a"}, {"a"}, 2).signature().find("|nw:2|") != std::string::npos);
  CHECK(corpus_chrf({"a"}, {"a"}).signature().find("|nw:0|") != std::string::npos);
  CHECK_THROWS_WITH(corpus_chrf({"a"}, {"a"}, 5), Catch::Contains("word order") && Catch::Contains("got 5"));
  CHECK_THROWS_AS(corpus_chrf({"a"}, {"a"}, -1), attn::Error);
}
