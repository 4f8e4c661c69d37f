#include "train/stop_signal.h"

#include <csignal>
#include <cstdlib>
#include <unistd.h>

namespace attn::train {

namespace {

volatile std::sig_atomic_t stop_flag = 0;

void on_signal(int signal_number) {
  if (stop_flag) _exit(128 + signal_number);  // second signal: the user insists
  stop_flag = 1;
}

}  // namespace

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
