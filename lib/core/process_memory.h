#pragma once
// The process's memory as the kernel counts it: what the training log and the benchmarks
// report, so that a growing footprint shows up in numbers rather than in an OOM kill.
namespace attn {

// Resident set size now, in MiB (from /proc/self/statm; 0 where that is missing).
double resident_mb();
// The largest resident set size so far, in MiB (getrusage).
double peak_resident_mb();

// Hands the allocator's free heap pages back to the kernel (glibc's malloc_trim; a no-op
// elsewhere). glibc returns only the top of its main heap by itself, so the holes that
// batches of varying shapes leave inside it stayed resident for the life of a run, and rss_mb
// crept (docs/performance.md, "Memory"). Costs a walk over the free lists: call it every log
// step, not per op.
void release_free_memory();

}  // namespace attn
