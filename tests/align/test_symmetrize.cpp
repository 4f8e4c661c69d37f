// Symmetrisation on alignments small enough to check by hand.
#include <catch2/catch.hpp>

#include "align/symmetrize.h"

using namespace attn::align;

namespace {

// 4 source and 4 target words. Forward (one source word per target word): t0 <- s0, t1 <- s0,
// t3 <- s3. Reverse (one target word per source word): s0 -> t0, s1 -> t1, s3 -> t2.
const Links kForward{{0, 0}, {0, 1}, {3, 3}};
const Links kReverse{{0, 0}, {1, 1}, {3, 2}};

}  // namespace

TEST_CASE("intersection and union of two directions", "[align][symmetrize]") {
  CHECK(symmetrize(kForward, kReverse, Symmetrization::intersection) == Links{{0, 0}});
  CHECK(symmetrize(kForward, kReverse, Symmetrization::union_links) == Links{{0, 0}, {0, 1}, {1, 1}, {3, 2}, {3, 3}});
  CHECK(symmetrize({}, {}, Symmetrization::union_links).empty());
}

TEST_CASE("grow-diag-final-and: grow from the intersection - then the forward's and the reverse's lone links",
          "[align][symmetrize]") {
  // Grow from (0, 0): its neighbour (0, 1) covers the uncovered target 1; then the diagonal
  // (1, 1) covers source 1. (3, 2) and (3, 3) touch no link taken. Final-and: the forward's
  // (3, 3) covers two uncovered words; the reverse's (3, 2) then finds source 3 covered.
  CHECK(symmetrize(kForward, kReverse, Symmetrization::grow_diag_final_and) == Links{{0, 0}, {0, 1}, {1, 1}, {3, 3}});
  // The reverse's lone link wins when the directions swap roles.
  CHECK(symmetrize(kReverse, kForward, Symmetrization::grow_diag_final_and) == Links{{0, 0}, {0, 1}, {1, 1}, {3, 2}});
  // A union link whose source and target are both covered is not grown into: (0, 1) here.
  CHECK(symmetrize({{0, 0}, {0, 1}, {1, 1}}, {{0, 0}, {1, 1}}, Symmetrization::grow_diag_final_and) ==
        Links{{0, 0}, {1, 1}});
  // Identical directions give themselves.
  CHECK(symmetrize(kForward, kForward, Symmetrization::grow_diag_final_and) == ordered(kForward));
}
