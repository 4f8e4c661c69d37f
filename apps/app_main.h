#pragma once
// What every attn program shares: parsing its command line (with --version and one-line
// errors), the one error boundary that turns any exception into one spdlog::error line and a
// non-zero exit, and the check that its output really reached standard output.
//
//   int main(int argc, char** argv) {
//     CLI::App app{"attn-x: ..."};
//     app.add_option("--beam", beam, "...")->check(attn::apps::at_least(1));
//     return attn::apps::run_app(app, argc, argv, [&] { ...; return 0; });
//   }
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <exception>
#include <functional>
#include <iostream>
#include <map>
#include <memory>
#include <optional>
#include <spdlog/sinks/stdout_color_sinks.h>
#include <spdlog/spdlog.h>
#include <sstream>
#include <string>

#include <CLI/CLI.hpp>

#include "core/build_info.h"
#include "core/choice.h"
#include "core/matmul_weight.h"
#include "dnnl/onednn_info.h"

namespace attn::apps {

// Logs and errors go to stderr: stdout carries the program's output (translations, scores, a
// dumped config), which must stay clean when redirected to a file.
inline void log_to_stderr() {
  auto sink = std::make_shared<spdlog::sinks::stderr_color_sink_mt>();
  spdlog::set_default_logger(std::make_shared<spdlog::logger>("", std::move(sink)));
}

// `--version`: what a bug report needs to say which binary ran on which CPU path.
inline std::string version_text(const std::string& program) {
  return program + " (attn " + attn::version() + ")\n" + "git commit: " + attn::git_commit() + "\n" +
         "oneDNN: " + dnn::onednn_version() + "\n" + "oneDNN CPU ISA: " + dnn::cpu_isa_name();
}

// A CLI11 check of a numeric flag: `ok` decides, `expected` says what a value must be, and
// the error reads "--beam: must be at least 1; got 0". `name` shows in --help.
inline CLI::Validator number_check(std::function<bool(double)> ok, const std::string& expected,
                                   const std::string& name) {
  return CLI::Validator(
      [ok, expected](std::string& text) -> std::string {
        double value = 0;
        if (!CLI::detail::lexical_cast(text, value)) return "'" + text + "' is not a number";
        return ok(value) ? std::string() : "must be " + expected + "; got " + text;
      },
      name);
}

// For flags where a value below `min` makes no sense (--beam 0, --steps -1).
inline CLI::Validator at_least(double min) {
  const std::string bound = CLI::detail::to_string(min);
  return number_check([min](double value) { return value >= min; }, "at least " + bound, ">=" + bound);
}

// [min, max], or (min, max] with above_min: "--character-coverage: must be in (0, 1]; got 0".
inline CLI::Validator in_range(double min, double max, bool above_min = false) {
  const std::string range =
      (above_min ? "(" : "[") + CLI::detail::to_string(min) + ", " + CLI::detail::to_string(max) + "]";
  return number_check([=](double value) { return (above_min ? value > min : value >= min) && value <= max; },
                      "in " + range, range);
}

// The message for a command line CLI11 rejected. For a program with subcommands whose first
// word is not one ("attn-bench bogus"), CLI11 would only say that a subcommand is required;
// this names the word and the valid subcommands. (None of these programs has an option
// before its subcommand, so the first word that is not a flag is the subcommand.)
// A flag whose values are a choice's names (core/choice.h).
template <class E>
CLI::Option* add_choice_option(CLI::App& app, const std::string& name, E& value, const std::string& help) {
  std::map<std::string, E> names;
  for (const auto& [entry, entry_name] : ChoiceNames<E>::table) names.emplace(entry_name, entry);
  return app.add_option(name, value, help)->transform(CLI::CheckedTransformer(names));
}

// --precision of the programs that decode a run: the matmuls' f32, bf16, int8, or auto (the
// faster of f32 and bf16 here, measured at load). The default, nullopt, is the run's own: int8
// for attn-quantize's runs, else f32.
inline CLI::Option* add_precision_option(CLI::App& app, std::string& value) {
  return app
      .add_option("--precision", value,
                  "matmul precision of decoding: f32, bf16, int8 or auto (the faster of f32 and bf16 on this CPU, "
                  "measured at load); weights converted once at load; default: int8 for a run written by "
                  "attn-quantize, else f32")
      ->check(CLI::IsMember(choice_names<Precision>()));
}
inline std::optional<Precision> precision_flag(const std::string& value) {
  if (value.empty()) return std::nullopt;
  return parse_choice<Precision>(value);
}

inline std::string parse_error_message(const CLI::App& app, const CLI::ParseError& error, int argc, char** argv) {
  const auto subcommands = app.get_subcommands([](const CLI::App*) { return true; });
  if (subcommands.empty() || !app.get_subcommands().empty()) return std::string(error.what()) + " (see --help)";
  std::string valid;
  for (const CLI::App* subcommand : subcommands) valid += (valid.empty() ? "" : ", ") + subcommand->get_name();
  for (int i = 1; i < argc; ++i)
    if (argv[i][0] != '-') return "unknown subcommand '" + std::string(argv[i]) + "'; valid subcommands: " + valid;
  return "a subcommand is required: " + valid;
}

// Flushes standard output and reports whether everything written to it arrived. A full disk
// (`> /dev/full`) or a closed descriptor must not pass for a complete output.
inline bool flush_stdout() {
  errno = 0;
  std::cout.flush();
  const int error = errno;  // the reason, when this flush is what failed
  const bool failed = std::fflush(stdout) != 0 || std::ferror(stdout) || !std::cout.good();
  if (failed) spdlog::error("cannot write to standard output{}", error ? std::string(": ") + std::strerror(error) : "");
  return !failed;
}

// Parses the command line (adding --version), runs `body`, and returns the exit code: the
// body's, or non-zero with one error line when the command line is wrong, the body throws, or
// standard output could not be written. --help and --version exit 0.
inline int run_app(CLI::App& app, int argc, char** argv, const std::function<int()>& body) {
  log_to_stderr();
  std::string program = argc > 0 ? argv[0] : "attn";
  program = program.substr(program.find_last_of('/') + 1);
  app.set_version_flag(
      "--version", [program] { return version_text(program); },
      "print attn's version, git commit, oneDNN version and CPU ISA, and exit");
  int code = 0;
  try {
    app.parse(argc, argv);
    code = body();
  } catch (const CLI::Success& help_or_version) {  // --help, --help-all, --version
    // Through a string: CLI11 flushes as it prints, and a failure there would lose its reason.
    std::ostringstream text;
    code = app.exit(help_or_version, text);
    std::cout << text.str();
  } catch (const CLI::ParseError& error) {
    spdlog::error("{}", parse_error_message(app, error, argc, argv));
    return error.get_exit_code();
  } catch (const std::exception& error) {
    spdlog::error("{}", error.what());
    code = 1;
  }
  // After a failure, one error line is enough: the output is incomplete anyway.
  if (code == 0 && !flush_stdout()) code = 1;
  return code;
}

}  // namespace attn::apps
