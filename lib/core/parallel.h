#pragma once
// When our own OpenMP loops fork a thread team: only above this many elements of work does a
// team save more than it costs (a fork-join is microseconds; far worse when the cores are
// shared and a spinning partner thread is descheduled).
#include <cstdint>

namespace attn {

constexpr int64_t kParallelWork = 32768;

// The same decision for a pass over a whole buffer that does a few operations per element it
// reads or writes (zeroing the gradients, quantising or rescaling rows, the initialisers'
// fills): such a pass waits on memory more than on arithmetic, so a team shortens it less than
// it does kParallelWork's loops, and needs twice the elements before its fork-join is paid for.
constexpr int64_t kParallelPass = 2 * kParallelWork;

}  // namespace attn
