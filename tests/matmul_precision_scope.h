#pragma once
// Sets the process's matmul precision (dnn::Context) for one test and puts f32 back after it,
// so that a failing bf16 test cannot leave the tests after it in bf16.
#include "dnnl/context.h"

namespace attn::testing {

struct MatmulPrecisionScope {
  explicit MatmulPrecisionScope(dnn::MatmulPrecision precision) {
    dnn::Context::get().set_matmul_precision(precision);
  }
  ~MatmulPrecisionScope() { dnn::Context::get().set_matmul_precision(dnn::MatmulPrecision::f32); }
  MatmulPrecisionScope(const MatmulPrecisionScope&) = delete;
  MatmulPrecisionScope& operator=(const MatmulPrecisionScope&) = delete;
};

}  // namespace attn::testing
