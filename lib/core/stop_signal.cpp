#include "core/stop_signal.h"

#include <cstdlib>
#include <mutex>
#include <pthread.h>
#include <thread>
#include <unistd.h>

namespace attn {

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

std::mutex callback_mutex;
std::function<void()> stop_callback;  // guarded by callback_mutex

void run_stop_callback() {
  std::function<void()> callback;
  {
    const std::lock_guard<std::mutex> lock(callback_mutex);
    callback = stop_callback;
  }
  if (callback) callback();
}

// The one thread that takes the stop signals, so the kernel delivers them here (it picks a
// thread that does not block them). It runs no oneDNN code: its stack pointer is its stack.
// sigsuspend unblocks them only while it waits, atomically, so a signal that arrives while the
// callback runs waits for the next sigsuspend instead of slipping past it.
void start_catching_thread() {
  std::thread([] {
    sigset_t waiting;
    pthread_sigmask(SIG_BLOCK, nullptr, &waiting);  // inherited: the stop signals blocked
    sigdelset(&waiting, SIGINT);
    sigdelset(&waiting, SIGTERM);
    while (true) {
      sigsuspend(&waiting);  // returns after each handled signal
      if (stop_flag) run_stop_callback();
    }
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

void on_stop_request(std::function<void()> callback) {
  {
    const std::lock_guard<std::mutex> lock(callback_mutex);
    stop_callback = callback;
  }
  if (callback && stop_requested()) callback();
}

}  // namespace attn
