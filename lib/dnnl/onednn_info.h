#pragma once
// Which oneDNN this process runs and which instruction set its CPU kernels use (`--version`).
#include <string>

namespace attn::dnn {

// The oneDNN library loaded at run time, e.g. "2.6.3 (commit 52b5f107)".
std::string onednn_version();
// The most capable instruction set oneDNN dispatches to on this CPU (after DNNL_MAX_CPU_ISA /
// ONEDNN_MAX_CPU_ISA, if set), named as those variables name it, e.g. "avx512_core_bf16".
std::string cpu_isa_name();

}  // namespace attn::dnn
