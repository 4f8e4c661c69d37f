#pragma once
// The precision a program computes in, from the one its user asked for. f32, bf16 and int8 are
// taken as asked; auto is the faster of f32 and bf16 on this CPU, decided by measuring both
// matmul peaks here and now, because the ISA's name does not tell: CPUs with the same
// avx512_bf16 flag run oneDNN's bf16 matmul well above or well below f32, and training follows
// (docs/performance.md, "bf16 and the CPU").
#include <string>

#include "core/choice.h"

namespace attn::ops {

struct PrecisionChoice {
  Precision requested = Precision::f32;
  Precision precision = Precision::f32;    // what to compute in: never automatic
  double f32_gflops = 0, bf16_gflops = 0;  // the measured peaks (auto with a bf16 matmul only)
  std::string reason;                      // one line for the log
};

// bf16 is chosen when its peak is at least this many times f32's: the rest of a training step
// (conversions, softmax, layer norm, Adam) costs the same in both, so a smaller lead in the
// products is lost on the way (docs/performance.md, "bf16 and the CPU").
constexpr double kBf16PeakLead = 1.25;

// Resolves `requested`, which the flag or config key `key` asked for (named in errors); auto
// measures at the thread count in force (dnn::set_num_threads). Asking for bf16 where oneDNN
// has no bf16 matmul is an error.
PrecisionChoice resolve_precision(Precision requested, const std::string& key);

// Median GFLOP/s over `repeats` products of two size x size matrices in `precision` (f32 or
// bf16), after one warm-up: the denominator of model-FLOPs utilisation, and auto's probe.
double measure_matmul_peak(Precision precision, int size = 2048, int repeats = 5);

}  // namespace attn::ops
