#pragma once
// When our own OpenMP loops fork a thread team: only above this many elements of work does a
// team save more than it costs (a fork-join is microseconds; far worse when the cores are
// shared and a spinning partner thread is descheduled).
#include <cstdint>

namespace attn {

constexpr int64_t kParallelWork = 32768;

}  // namespace attn
