#pragma once
// What the programs share to read text and write their results: the input (standard input or a
// file), the output (standard output, or a file that appears complete or not at all), the
// translation loop over a stream of lines, and attn-translate's report of it.
//
//   TextInput input(path);                      // "" = standard input; opened at once
//   TextOutput output(out_path, "the translations");
//   TranslationReport report(quiet);
//   translate_windows(input, window, [&](const std::vector<std::string>& lines, const auto& translations) {
//     output.write(format(translations));
//     report.add(translations);
//   });
//   output.finish();                            // only now does out_path appear
//   report.summary();
#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <ostream>
#include <string>
#include <vector>

#include "decode/translator.h"
#include "io/atomic_file.h"

namespace attn::apps {

// Standard input, or a file (--input, --subset's), opened by the constructor so that a wrong
// path fails before a model loads.
class TextInput {
 public:
  explicit TextInput(const std::string& path);  // "" = standard input
  ~TextInput();
  TextInput(const TextInput&) = delete;
  TextInput& operator=(const TextInput&) = delete;
  int fd() const { return fd_; }
  // For messages: "standard input" or 'PATH'.
  const std::string& name() const { return name_; }

 private:
  int fd_;
  std::string name_;
};

// Standard output, or a file written complete or not at all: to FILE.tmp, renamed over FILE
// only by finish() (io::AtomicFile), so a failure never leaves a partial FILE nor replaces an
// existing one. The constructor creates FILE.tmp: a path that cannot be written fails before
// any work.
class TextOutput {
 public:
  // `what` names the output in the error of a standard output that cannot be written ("the
  // translations").
  TextOutput(const std::string& path, std::string what);  // "" = standard output
  ~TextOutput();
  TextOutput(const TextOutput&) = delete;
  TextOutput& operator=(const TextOutput&) = delete;

  // For writers that stream many small pieces (CSV rows). A file's failures throw from it.
  std::ostream& stream();
  // One piece, handed on at once: a reader of standard output sees it now, and a full disk
  // stops the program here, not at the end (a file's piece goes to FILE.tmp).
  void write(const std::string& text);
  // Everything is written: the file appears. (Standard output is flushed and checked by
  // run_app, app_main.h, when the program ends.)
  void finish();

 private:
  void check_standard_output();

  std::string what_;
  std::unique_ptr<io::AtomicFile> file_;
  std::unique_ptr<std::streambuf> file_buffer_;
  std::unique_ptr<std::ostream> file_stream_;
};

// The summary at the end of a translation and, when stderr is a terminal, a progress line for
// long inputs.
class TranslationReport {
 public:
  explicit TranslationReport(bool quiet);
  void add(const std::vector<decode::Translation>& translations);
  void summary() const;

 private:
  using Clock = std::chrono::steady_clock;
  double seconds() const;

  bool quiet_, terminal_;
  bool progress_shown_ = false;
  int64_t lines_ = 0, tokens_ = 0;
  Clock::time_point start_ = Clock::now(), last_progress_ = Clock::now();
};

// A window's lines and their translations, in input order.
using WindowTranslated =
    std::function<void(const std::vector<std::string>& lines, const std::vector<decode::Translation>& translations)>;

// Streams `input` through `window`, as Marian and fairseq-interactive do: a window is translated
// as soon as it is full, when the input pauses with lines pending, and at the end, and
// `translated` gets it before more input is read.
void translate_windows(const TextInput& input, decode::TranslationWindow& window, const WindowTranslated& translated);

}  // namespace attn::apps
