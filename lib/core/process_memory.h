#pragma once
// The process's memory as the kernel counts it: what the training log and the benchmarks
// report, so that a growing footprint shows up in numbers rather than in an OOM kill.
namespace attn {

// Resident set size now, in MiB (from /proc/self/statm; 0 where that is missing).
double resident_mb();
// The largest resident set size so far, in MiB (getrusage).
double peak_resident_mb();

}  // namespace attn
