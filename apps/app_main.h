#pragma once
// The one error boundary every attn program shares: run the program body, turn any exception
// into one clear spdlog::error line and a non-zero exit.
#include <exception>
#include <functional>
#include <memory>
#include <spdlog/sinks/stdout_color_sinks.h>
#include <spdlog/spdlog.h>

#include <CLI/CLI.hpp>

namespace attn::apps {

// Logs and errors go to stderr: stdout carries the program's output (translations, scores, a
// dumped config), which must stay clean when redirected to a file.
inline void log_to_stderr() {
  auto sink = std::make_shared<spdlog::sinks::stderr_color_sink_mt>();
  spdlog::set_default_logger(std::make_shared<spdlog::logger>("", std::move(sink)));
}

inline int run_app(const std::function<int()>& body) {
  log_to_stderr();
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
