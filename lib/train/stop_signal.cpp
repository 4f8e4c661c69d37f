#include "train/stop_signal.h"

#include <cstdlib>
#include <mutex>
#include <pthread.h>
#include <thread>
#include <unistd.h>

namespace attn::train {

namespace {

volatile std::sig_atomic_t stop_flag = 0;

void on_signal(int signal_number) {
  if (stop_flag) _exit(128 + signal_number);  // second signal: the user insists
  stop_flag = 1;
}

sigset_t stop_signals() {
  sigset_t signals;
  sigemptyset(&signals);
  sigaddset(&signals, SIGINT);
  sigaddset(&signals, SIGTERM);
  return signals;
}

// The one thread with the stop signals unblocked, so the kernel delivers them here (it picks a
// thread that does not block them). It runs no oneDNN code: its stack pointer is its stack.
void start_catching_thread() {
  std::thread([] {
    const sigset_t signals = stop_signals();
    pthread_sigmask(SIG_UNBLOCK, &signals, nullptr);
    while (true) pause();  // returns after each handled signal
  }).detach();
}

}  // namespace

StopSignalRouting::StopSignalRouting() {
  static std::once_flag started;
  const sigset_t signals = stop_signals();
  pthread_sigmask(SIG_BLOCK, &signals, &previous_mask_);
  std::call_once(started, start_catching_thread);
}

StopSignalRouting::~StopSignalRouting() { pthread_sigmask(SIG_SETMASK, &previous_mask_, nullptr); }

void install_stop_handlers() {
  struct sigaction action {};
  action.sa_handler = on_signal;
  sigemptyset(&action.sa_mask);
  sigaction(SIGINT, &action, nullptr);
  sigaction(SIGTERM, &action, nullptr);
}

bool stop_requested() { return stop_flag != 0; }
void clear_stop_request() { stop_flag = 0; }

}  // namespace attn::train
