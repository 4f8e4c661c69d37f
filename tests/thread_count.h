#pragma once
// Runs a test's scope with `threads` of attn's threads (core/parallel.h), then restores the
// count before it: 2 or 3 make pieces on any machine, whatever its cores.
#include "core/parallel.h"

namespace attn::testing {

class ThreadCount {
 public:
  explicit ThreadCount(int threads) : saved_(parallel_threads()) { set_parallel_threads(threads); }
  ~ThreadCount() { set_parallel_threads(saved_); }
  ThreadCount(const ThreadCount&) = delete;
  ThreadCount& operator=(const ThreadCount&) = delete;

 private:
  int saved_;
};

}  // namespace attn::testing
