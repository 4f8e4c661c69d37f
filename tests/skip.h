#pragma once
// A test that cannot run here (no bf16 matmul on this CPU, a missing system tool) ends as
// skipped, not passed: ATTN_SKIP_UNLESS records the reason and returns, and at the end of the
// test case tests/skip.cpp prints "attn-test-skipped: <reason>", which ctest's
// SKIP_REGULAR_EXPRESSION (tests/CMakeLists.txt) turns into "Skipped". A skip anywhere in a test
// case (a SECTION, one value of a GENERATE) marks the whole test case skipped; a failure anywhere
// in it wins over the skip, so a skip never hides a failure.
#include <string>

namespace attn::testing {

// The marker line's prefix, the one ctest looks for.
inline constexpr const char* kSkipMarker = "attn-test-skipped: ";

// Records that the running test case skipped a part (or all) of itself, and why.
void record_skip(const std::string& reason);

}  // namespace attn::testing

// Skips the rest of the enclosing function unless `condition` holds. Put it first in the
// TEST_CASE (or first in the GENERATE run or SECTION it concerns).
#define ATTN_SKIP_UNLESS(condition, reason) \
  do {                                      \
    if (!(condition)) {                     \
      ::attn::testing::record_skip(reason); \
      return;                               \
    }                                       \
  } while (false)
