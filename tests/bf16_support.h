#pragma once
// bf16 tests run only where oneDNN has a bf16 matmul; elsewhere they are skipped (tests/skip.h).
// ONEDNN_MAX_CPU_ISA=AVX2 hides the bf16 matmul of a CPU that has one, which is how
// tests/tools/test_skip_reporting.py checks the skip on such a CPU.
#include <cstdlib>
#include <string>

#include "dnnl/onednn_info.h"
#include "ops/gemm.h"
#include "skip.h"

namespace attn::testing {

// Why a bf16 test does not run here.
inline std::string no_bf16_matmul_reason() {
  std::string reason = "oneDNN has no bf16 matmul on this CPU (it needs AVX-512)";
  if (const char* isa = std::getenv("ONEDNN_MAX_CPU_ISA")) reason += "; ONEDNN_MAX_CPU_ISA=" + std::string(isa);
  return reason;
}

// Whether oneDNN runs bf16 on the CPU's own bf16 instructions (AVX512_BF16, AMX), not on
// AVX-512 alone, which it emulates them with.
inline bool native_bf16_isa() {
  const std::string isa = ::attn::dnn::cpu_isa_name();
  return isa == "avx512_core_bf16" || isa == "avx512_core_amx";
}

}  // namespace attn::testing

// Skips the rest of the enclosing function where oneDNN has no bf16 matmul.
#define ATTN_SKIP_UNLESS_BF16_MATMUL() \
  ATTN_SKIP_UNLESS(::attn::ops::bf16_gemm_supported(), ::attn::testing::no_bf16_matmul_reason())
