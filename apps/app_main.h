#pragma once
// The one error boundary every attn program shares: run the program body, turn any exception
// into one clear spdlog::error line and a non-zero exit.
#include <exception>
#include <functional>

#include <CLI/CLI.hpp>
#include <spdlog/spdlog.h>

namespace attn::apps {

inline int run_app(const std::function<int()>& body) {
  try {
    return body();
  } catch (const CLI::ParseError&) {
    throw;  // CLI11 prints its own message and exit code
  } catch (const std::exception& error) {
    spdlog::error("{}", error.what());
    return 1;
  }
}

}  // namespace attn::apps
