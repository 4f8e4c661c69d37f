// Link lists, hard links of a soft alignment, and the piece -> word level.
#include <catch2/catch.hpp>

#include "align/links.h"

using namespace attn::align;

TEST_CASE("links are ordered by target then source and written as Pharaoh i-j", "[align][links]") {
  CHECK(ordered({{2, 1}, {0, 0}, {1, 1}, {0, 0}}) == Links{{0, 0}, {1, 1}, {2, 1}});
  CHECK(pharaoh_line({{0, 0}, {2, 1}, {1, 3}}) == "0-0 2-1 1-3");
  CHECK(pharaoh_line({}) == "");
}

TEST_CASE("hard links: argmax with the null column linking nothing - or every weight above a threshold",
          "[align][links]") {
  SoftAlignment soft(3, 2);  // 3 target rows over 2 source columns and the null
  const float weights[3][3] = {{0.6f, 0.3f, 0.1f}, {0.2f, 0.2f, 0.6f}, {0.45f, 0.45f, 0.1f}};
  for (int r = 0; r < 3; ++r)
    for (int c = 0; c < 3; ++c) soft.at(r, c) = weights[r][c];
  CHECK(hard_links(soft) == Links{{0, 0}, {0, 2}});  // row 1 goes to the null; row 2's tie: the first
  CHECK(hard_links(soft, 0.3f) == Links{{0, 0}, {1, 0}, {0, 2}, {1, 2}});
  CHECK(hard_links(soft, 0.7f).empty());
  CHECK_THROWS_WITH(hard_links(soft, -1.f), Catch::Contains("threshold"));
}

TEST_CASE("word links: any piece link links the words - positions of no word are dropped", "[align][links]") {
  const WordOf source{0, 0, 1, -1}, target{0, 1, 1};
  CHECK(word_links({{0, 0}, {1, 0}, {2, 1}, {1, 2}, {3, 2}}, source, target) == Links{{0, 0}, {0, 1}, {1, 1}});
  CHECK(word_count(source) == 2);
  CHECK_THROWS_WITH(word_links({{4, 0}}, source, target), Catch::Contains("outside"));
}

TEST_CASE("word level: source pieces summed - target pieces averaged - no-word columns to the null", "[align][links]") {
  SoftAlignment pieces(2, 3);  // target pieces [w0 w0], source pieces [w0 w0 none]
  const float weights[2][4] = {{0.2f, 0.3f, 0.4f, 0.1f}, {0.6f, 0.2f, 0.f, 0.2f}};
  for (int r = 0; r < 2; ++r)
    for (int c = 0; c < 4; ++c) pieces.at(r, c) = weights[r][c];
  const SoftAlignment words = word_level(pieces, {0, 0, -1}, {0, 0});
  REQUIRE(words.rows == 1);
  REQUIRE(words.columns == 1);
  CHECK(words.at(0, 0) == Approx((0.5 + 0.8) / 2));
  CHECK(words.at(0, 1) == Approx((0.5 + 0.2) / 2));  // the null: the no-word column and the null
}
