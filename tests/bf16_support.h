#pragma once
// bf16 tests run only where oneDNN has a bf16 matmul.
#include <catch2/catch.hpp>

#include "ops/gemm.h"

namespace attn::testing {

// True, with a warning in the report, where oneDNN has no bf16 matmul: a bf16 test then
// returns at once (`if (testing::no_bf16_matmul()) return;`).
inline bool no_bf16_matmul() {
  if (ops::bf16_gemm_supported()) return false;
  WARN("skipped: oneDNN has no bf16 matmul on this CPU (it needs AVX-512)");
  return true;
}

}  // namespace attn::testing
