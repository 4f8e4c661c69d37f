#include <catch2/catch.hpp>

#include "core/check.h"
#include "eval/chrf.h"

using attn::eval::ChrfScore;
using attn::eval::corpus_chrf;

TEST_CASE("chrF of a corpus against itself is 100 and of empty hypotheses is 0", "[eval][chrf]") {
  const std::vector<std::string> text = {"Il gatto è sul tappeto.", "Costa 3,50 €."};
  CHECK(corpus_chrf(text, text).score == Approx(100.0));
  CHECK(corpus_chrf({"", ""}, text).score == 0.0);
}

TEST_CASE("chrF hand example: recall weighs four times precision", "[eval][chrf]") {
  // hyp "ab", ref "abc":
  //   n=1: hyp 2, ref 3, match 2;  n=2: hyp 1, ref 2 ("ab" "bc"), match 1;  n=3: hyp 0 -> skipped
  //   P = (2/2 + 1/1) / 2 = 1,  R = (2/3 + 1/2) / 2 = 7/12
  //   chrF2 = 100 * 5 P R / (4 P + R) = 100 * (35/12) / (55/12) = 700/11 = 63.64
  const ChrfScore s = corpus_chrf({"ab"}, {"abc"});
  CHECK(s.precision == Approx(1.0));
  CHECK(s.recall == Approx(7.0 / 12));
  CHECK(s.score == Approx(700.0 / 11));
  CHECK(s.format() == "chrF2 = 63.64");
}

TEST_CASE("chrF drops hypothesis n-grams of orders the reference lacks - then sums the corpus", "[eval][chrf]") {
  // ("abcd" | "ab") + ("xyz" | "xyz"); the first ref has no trigram, so its hyp trigrams count 0.
  //   n=1: hyp 4+3, ref 2+3, match 2+3;  n=2: hyp 3+2, ref 1+2, match 1+2;  n=3: hyp 0+1, ref 0+1, match 1
  //   P = (5/7 + 3/5 + 1) / 3 = 27/35,  R = (1 + 1 + 1) / 3 = 1
  //   chrF2 = 100 * 5 (27/35) / (4 (27/35) + 1) = 100 * 135/143 = 94.41
  const ChrfScore s = corpus_chrf({"abcd", "xyz"}, {"ab", "xyz"});
  CHECK(s.precision == Approx(27.0 / 35));
  CHECK(s.recall == Approx(1.0));
  CHECK(s.score == Approx(13500.0 / 143));
}

TEST_CASE("chrF ignores whitespace and counts code points - not bytes", "[eval][chrf]") {
  CHECK(corpus_chrf({"a b\u00a0c"}, {"abc"}).score == Approx(100.0));
  // "éa" vs "èa": n=1 match 1 of 2, n=2 match 0 of 1 -> P = R = (1/2 + 0) / 2 = 1/4 -> 25.
  // (On UTF-8 bytes the shared lead byte 0xC3 would wrongly match too.)
  CHECK(corpus_chrf({"éa"}, {"èa"}).score == Approx(25.0));
}

TEST_CASE("chrF rejects mismatched counts and carries its signature", "[eval][chrf]") {
  CHECK_THROWS_WITH(corpus_chrf({"a"}, {"a", "b"}), Catch::Contains("1 lines") && Catch::Contains("have 2"));
  CHECK_THROWS_AS(corpus_chrf({"a"}, {""}), attn::Error);
  const std::string sig = corpus_chrf({"a"}, {"a"}).signature();
  CHECK(sig.rfind("nrefs:1|case:mixed|eff:yes|nc:6|nw:0|space:no|version:", 0) == 0);
  CHECK(sig.find("attn") != std::string::npos);
}
