#pragma once
// Tests wait for the event they need (a request accepted, a batch decoding, a file written)
// rather than sleep a fixed time, which races a loaded machine.
#include <chrono>
#include <thread>

namespace attn::testing {

// Polls `done` until it returns true (then true) or `seconds` pass (then false).
template <class Predicate>
bool wait_until(Predicate done, double seconds) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::duration<double>(seconds);
  while (!done()) {
    if (std::chrono::steady_clock::now() > deadline) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
  }
  return true;
}

}  // namespace attn::testing
