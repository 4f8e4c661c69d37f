#include <cmath>

#include <catch2/catch.hpp>

#include "core/check.h"
#include "eval/bleu.h"

using attn::eval::BleuScore;
using attn::eval::corpus_bleu;

TEST_CASE("BLEU of a corpus against itself is 100", "[eval][bleu]") {
  const std::vector<std::string> text = {"The cat sat on the mat.", "It costs $3.50, doesn't it?"};
  const BleuScore s = corpus_bleu(text, text);
  CHECK(s.score == Approx(100.0).epsilon(1e-12));
  for (double p : s.precisions) CHECK(p == Approx(100.0));
  CHECK(s.bp == 1.0);
  CHECK(s.hyp_len == 15);  // "The cat sat on the mat ." = 7, "It costs $ 3.50 , doesn't it ?" = 8
  CHECK(s.ref_len == 15);
}

TEST_CASE("BLEU compares 13a tokens - so spacing around punctuation does not matter", "[eval][bleu]") {
  CHECK(corpus_bleu({"Hello, world."}, {"Hello , world ."}).score == Approx(100.0));
}

TEST_CASE("BLEU of empty hypotheses is 0 with a zero brevity penalty", "[eval][bleu]") {
  const BleuScore s = corpus_bleu({"", ""}, {"the cat", "a dog"});
  CHECK(s.score == 0.0);
  CHECK(s.bp == 0.0);
  CHECK(s.hyp_len == 0);
  CHECK(s.ref_len == 4);
}

TEST_CASE("BLEU with no 4-gram match uses exp smoothing", "[eval][bleu]") {
  // hyp "the cat sat on the mat", ref "the cat sits on the mat" (6 tokens each, BP = 1)
  //   1-grams: the x2, cat, on, mat match          5/6  -> p1 = 83.33
  //   2-grams: "the cat" "on the" "the mat"        3/5  -> p2 = 60
  //   3-grams: "on the mat"                         1/4  -> p3 = 25
  //   4-grams: none                                 0/3  -> p4 = 100 / (2 * 3) = 16.67
  //   BLEU = (83.33 * 60 * 25 * 16.67)^(1/4) = 37.99
  const BleuScore s = corpus_bleu({"the cat sat on the mat"}, {"the cat sits on the mat"});
  CHECK(s.precisions[0] == Approx(500.0 / 6));
  CHECK(s.precisions[1] == Approx(60.0));
  CHECK(s.precisions[2] == Approx(25.0));
  CHECK(s.precisions[3] == Approx(100.0 / 6));
  CHECK(s.score == Approx(std::pow(500.0 / 6 * 60 * 25 * 100.0 / 6, 0.25)));
  CHECK(s.score == Approx(37.9918).margin(1e-4));
}

TEST_CASE("BLEU clips repeated n-grams and doubles the smoothing per zero-match order", "[eval][bleu]") {
  // hyp "the the the the", ref "the cat": hyp 4 tokens >= ref 2, BP = 1
  //   1-grams: min(4, 1) = 1 of 4 -> 25;   2-grams 0/3 -> 100 / (2 * 3) = 16.67
  //   3-grams 0/2 -> 100 / (4 * 2) = 12.5;  4-grams 0/1 -> 100 / (8 * 1) = 12.5
  //   BLEU = (25 * 16.67 * 12.5 * 12.5)^(1/4) = 15.97
  const BleuScore s = corpus_bleu({"the the the the"}, {"the cat"});
  CHECK(s.precisions[0] == Approx(25.0));
  CHECK(s.precisions[1] == Approx(100.0 / 6));
  CHECK(s.precisions[2] == Approx(12.5));
  CHECK(s.precisions[3] == Approx(12.5));
  CHECK(s.score == Approx(std::pow(25.0 * 100.0 / 6 * 12.5 * 12.5, 0.25)));
  CHECK(s.ratio == Approx(2.0));
}

TEST_CASE("BLEU brevity penalty is exp(1 - ref_len / hyp_len) for a short hypothesis", "[eval][bleu]") {
  // hyp "the cat sat on the" (5) vs ref "... mat" (6): every precision 100,
  // BP = exp(1 - 6/5) = exp(-0.2) = 0.8187, BLEU = 81.87, ratio = 5/6
  const BleuScore s = corpus_bleu({"the cat sat on the"}, {"the cat sat on the mat"});
  CHECK(s.bp == Approx(std::exp(-0.2)));
  CHECK(s.score == Approx(100.0 * std::exp(-0.2)));
  CHECK(s.ratio == Approx(5.0 / 6));
  CHECK(s.format() == "BLEU = 81.87 100.0/100.0/100.0/100.0 (BP = 0.819 ratio = 0.833 hyp_len = 5 ref_len = 6)");
}

TEST_CASE("BLEU is 0 when an order has no hypothesis n-gram at all - even with matches", "[eval][bleu]") {
  // hyp "the cat sat" has no 4-gram: sacreBLEU stops at total_4 = 0 and log(0) floors BLEU to 0.
  const BleuScore s = corpus_bleu({"the cat sat"}, {"the cat sat on the mat"});
  CHECK(s.score == 0.0);
  CHECK(s.precisions[2] == Approx(100.0));
  CHECK(s.precisions[3] == 0.0);
  CHECK(s.bp == Approx(std::exp(1.0 - 2.0)));
}

TEST_CASE("BLEU sums statistics over the corpus instead of averaging sentences", "[eval][bleu]") {
  // ("a b c d" | "a b c d") + ("x y" | "p q"): hyp_len = ref_len = 6
  //   1-grams 4/6, 2-grams 3/(3+1), 3-grams 2/2, 4-grams 1/1
  //   BLEU = (66.67 * 75 * 100 * 100)^(1/4) = 84.09 (the sentence average would be 50)
  const BleuScore s = corpus_bleu({"a b c d", "x y"}, {"a b c d", "p q"});
  CHECK(s.score == Approx(std::pow(200.0 / 3 * 75 * 100 * 100, 0.25)));
  CHECK(s.score == Approx(84.0896).margin(1e-4));
}

TEST_CASE("BLEU with no matching word is 0 with zero precisions", "[eval][bleu]") {
  const BleuScore s = corpus_bleu({"x y z w v"}, {"a b c d e"});
  CHECK(s.score == 0.0);
  for (double p : s.precisions) CHECK(p == 0.0);
  CHECK(s.bp == 1.0);
}

TEST_CASE("BLEU rejects mismatched counts - empty corpora and empty references", "[eval][bleu]") {
  CHECK_THROWS_WITH(corpus_bleu({"a", "b", "c"}, {"a", "b"}), Catch::Contains("3 lines") && Catch::Contains("have 2"));
  CHECK_THROWS_AS(corpus_bleu({}, {}), attn::Error);
  CHECK_THROWS_WITH(corpus_bleu({"a", "b"}, {"a", ""}), Catch::Contains("line 2"));
}

TEST_CASE("BLEU signature names the sacreBLEU settings and says it is attn", "[eval][bleu]") {
  const std::string sig = corpus_bleu({"a"}, {"a"}).signature();
  CHECK(sig.rfind("nrefs:1|case:mixed|eff:no|tok:13a|smooth:exp|version:", 0) == 0);
  CHECK(sig.find("attn") != std::string::npos);
}
