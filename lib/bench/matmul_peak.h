#pragma once
// The matmul throughput this machine reaches in this process: the denominator of model-FLOPs
// utilisation. A large square gemm (2048^3 by default) in the current matmul precision.
namespace attn::bench {

// Median GFLOP/s over `repeats` runs after one warm-up.
double measure_matmul_peak(int size = 2048, int repeats = 5);

}  // namespace attn::bench
