// Hidden test cases (tag [.skip-fixture]: ctest does not list them) that
// tests/tools/test_ctest_reporting.py runs to check tests/skip.h: a skip in one part of a test
// case skips the whole of it, and a failure beside a skip still fails it.
#include <catch2/catch.hpp>

#include "skip.h"

TEST_CASE("skip fixture: a skip in one SECTION skips the test case - whose other SECTION passed", "[.skip-fixture]") {
  SECTION("runs") { CHECK(1 + 1 == 2); }
  SECTION("skips") { ATTN_SKIP_UNLESS(false, "the fixture's reason"); }
}

TEST_CASE("skip fixture: a failing SECTION beside a skip fails the test case", "[.skip-fixture]") {
  SECTION("fails") { CHECK(1 + 1 == 3); }
  SECTION("skips") { ATTN_SKIP_UNLESS(false, "the fixture's reason"); }
}
