#pragma once
// Sets the process's matmul precision (dnn::Context) for one test and puts f32 back after it,
// so that a failing bf16 test cannot leave the tests after it in bf16.
#include <catch2/catch.hpp>

#include "dnnl/context.h"
#include "ops/gemm.h"

namespace attn::testing {

struct MatmulPrecisionScope {
  explicit MatmulPrecisionScope(dnn::MatmulPrecision precision) {
    dnn::Context::get().set_matmul_precision(precision);
  }
  ~MatmulPrecisionScope() { dnn::Context::get().set_matmul_precision(dnn::MatmulPrecision::f32); }
  MatmulPrecisionScope(const MatmulPrecisionScope&) = delete;
  MatmulPrecisionScope& operator=(const MatmulPrecisionScope&) = delete;
};

// True, with a warning in the report, where oneDNN has no bf16 matmul: a bf16 test then
// returns at once (`if (testing::no_bf16_matmul()) return;`).
inline bool no_bf16_matmul() {
  if (ops::bf16_gemm_supported()) return false;
  WARN("skipped: oneDNN has no bf16 matmul on this CPU (it needs AVX-512)");
  return true;
}

}  // namespace attn::testing
