#pragma once
// SIGINT/SIGTERM for the programs that must stop cleanly: attn-train finishes the step it is in,
// saves a checkpoint and exits; attn-serve stops accepting, finishes what it accepted and exits.
// The handler only sets a flag; a second signal exits at once.
//
// Where a signal is caught matters. The kernel writes a handler's frame (a kilobyte or more) just
// below the stack pointer of the thread it interrupts, and oneDNN 2.6's AVX gemm kernel
// (jit_avx_gemm_f32, which f32 matmuls run on AVX2 machines) moves its stack pointer into a heap
// buffer: a signal caught there writes over the heap, and glibc aborts later ("corrupted size
// vs. prev_size while consolidating"; oneDNN's bug report 4845, fixed upstream in 2026). So while a
// StopSignalRouting lives, the stop signals are blocked in every thread that computes and are
// caught on a thread of their own that does nothing else.
#include <csignal>
#include <functional>

namespace attn {

// Blocks SIGINT and SIGTERM in this thread, and so in every thread it starts from now on
// (OpenMP's, the data stream's, a server's), and starts (once per process) the thread that
// catches them. Make it before the first other thread starts. Until install_stop_handlers() a
// stop signal keeps its default action: the process ends at once. The destructor restores this
// thread's mask (tests train in-process; programs they start would inherit it).
class StopSignalRouting {
 public:
  StopSignalRouting();
  ~StopSignalRouting();
  StopSignalRouting(const StopSignalRouting&) = delete;
  StopSignalRouting& operator=(const StopSignalRouting&) = delete;

 private:
  sigset_t previous_mask_;
};

void install_stop_handlers();
bool stop_requested();
void clear_stop_request();  // tests

// `callback` runs on the catching thread, as ordinary code (not inside the handler, so it may
// lock, allocate and call into a server), once after each first stop signal; at once when a
// stop is already requested. An empty function removes it. attn-serve stops its listener here.
void on_stop_request(std::function<void()> callback);

}  // namespace attn
