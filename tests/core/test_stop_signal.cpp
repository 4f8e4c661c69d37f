#include <atomic>
#include <chrono>
#include <csignal>
#include <pthread.h>
#include <thread>
#include <unistd.h>

#include <catch2/catch.hpp>

#include "core/stop_signal.h"
#include "core/tensor.h"
#include "ops/gemm.h"
#include "wait_until.h"

namespace {

using namespace attn;
using Clock = std::chrono::steady_clock;

bool blocks_stop_signals() {
  sigset_t mask;
  pthread_sigmask(SIG_BLOCK, nullptr, &mask);
  return sigismember(&mask, SIGINT) == 1 && sigismember(&mask, SIGTERM) == 1;
}

// Waits up to 5 s for the handler to have run.
bool stop_arrives() {
  return attn::testing::wait_until([] { return stop_requested(); }, 5);
}

}  // namespace

TEST_CASE("stop signals are blocked in the threads that compute and still reach the trainer", "[core][signals]") {
  REQUIRE_FALSE(blocks_stop_signals());
  {
    StopSignalRouting routing;
    install_stop_handlers();
    clear_stop_request();
    CHECK(blocks_stop_signals());
    bool worker_blocks = false;  // a thread started later: OpenMP's, the data stream's
    std::thread([&] { worker_blocks = blocks_stop_signals(); }).join();
    CHECK(worker_blocks);
    kill(getpid(), SIGTERM);
    CHECK(stop_arrives());
    clear_stop_request();
  }
  CHECK_FALSE(blocks_stop_signals());  // restored: programs a test starts must not inherit it
}

// The crash this prevents: caught on a thread inside oneDNN's AVX gemm kernel, a signal's frame
// lands on the heap, and glibc aborts ("corrupted size vs. prev_size while consolidating").
TEST_CASE("stop signals during matrix products leave the heap intact", "[core][signals]") {
  StopSignalRouting routing;
  install_stop_handlers();
  clear_stop_request();
  std::atomic<bool> done{false}, lost{false};
  std::atomic<int> delivered{0};
  std::thread sender([&] {
    while (!done) {
      kill(getpid(), SIGTERM);
      if (!stop_arrives()) lost = true;
      clear_stop_request();  // so that the next one is a "first" signal, not an exit
      ++delivered;
    }
  });
  const Tensor x = Tensor::full({500, 256}, 0.01f), w = Tensor::full({256, 256}, 0.01f);
  const auto end = Clock::now() + std::chrono::milliseconds(300);
  while ((Clock::now() < end || delivered < 50) && !lost) {
    Tensor y = Tensor::empty({500, 256});  // a shape oneDNN runs in jit_avx_gemm_f32 on AVX2
    ops::gemm(ops::MatrixView::of(x), ops::MatrixView::of(w).transposed(), ops::MatrixView::of(y));
  }
  done = true;
  sender.join();
  CHECK_FALSE(lost);
  CHECK(delivered >= 50);
}

TEST_CASE("a stop callback runs on the catching thread after a stop signal", "[core][signals]") {
  StopSignalRouting routing;
  install_stop_handlers();
  clear_stop_request();
  std::atomic<int> calls{0};
  std::atomic<bool> on_other_thread{false};
  const std::thread::id test_thread = std::this_thread::get_id();
  on_stop_request([&] {
    on_other_thread = std::this_thread::get_id() != test_thread;
    ++calls;
  });
  kill(getpid(), SIGTERM);
  attn::testing::wait_until([&] { return calls != 0; }, 5);
  on_stop_request({});
  CHECK(calls == 1);
  CHECK(on_other_thread);
  clear_stop_request();
}
