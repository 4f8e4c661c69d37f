#include "text_io.h"

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fcntl.h>
#include <iostream>
#include <spdlog/spdlog.h>
#include <unistd.h>

#include "core/check.h"
#include "io/line_reader.h"

namespace attn::apps {

namespace {

// How long the input may be silent before what has arrived is translated: long enough that a
// program writing lines in a burst fills whole batches, short enough that a person or a
// request-response client gets each answer at once.
constexpr std::chrono::milliseconds kInputPause{30};
constexpr std::chrono::milliseconds kWaitForever{-1};

// A stream's bytes into an AtomicFile, a buffer at a time. Its failures (a full disk) throw
// attn::Error naming the file, which the stream passes on (badbit in its exceptions).
class AtomicFileBuffer : public std::streambuf {
 public:
  explicit AtomicFileBuffer(io::AtomicFile& file) : file_(file), buffer_(1 << 16) {
    setp(buffer_.data(), buffer_.data() + buffer_.size());
  }

 protected:
  int_type overflow(int_type c) override {
    drain();
    if (!traits_type::eq_int_type(c, traits_type::eof())) sputc(traits_type::to_char_type(c));
    return traits_type::not_eof(c);
  }
  int sync() override {
    drain();
    return 0;
  }

 private:
  void drain() {
    file_.write(pbase(), size_t(pptr() - pbase()));
    setp(buffer_.data(), buffer_.data() + buffer_.size());
  }

  io::AtomicFile& file_;
  std::vector<char> buffer_;
};

}  // namespace

TextInput::TextInput(const std::string& path) : fd_(STDIN_FILENO), name_("standard input") {
  if (path.empty()) return;
  fd_ = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  ATTN_CHECK(fd_ >= 0, "cannot open '", path, "': ", std::strerror(errno));
  name_ = "'" + path + "'";
}

TextInput::~TextInput() {
  if (fd_ != STDIN_FILENO) ::close(fd_);
}

TextOutput::TextOutput(const std::string& path, std::string what) : what_(std::move(what)) {
  if (path.empty()) return;
  file_ = std::make_unique<io::AtomicFile>(path);
  file_buffer_ = std::make_unique<AtomicFileBuffer>(*file_);
  file_stream_ = std::make_unique<std::ostream>(file_buffer_.get());
  file_stream_->exceptions(std::ios::badbit);
}

// The stream goes first: it only refers to the buffer, which writes to the file.
TextOutput::~TextOutput() = default;

std::ostream& TextOutput::stream() { return file_stream_ ? *file_stream_ : std::cout; }

void TextOutput::write(const std::string& text) {
  if (file_stream_) {
    *file_stream_ << text << std::flush;
    return;
  }
  std::cout << text;
  check_standard_output();
}

void TextOutput::finish() {
  if (!file_) return;  // run_app checks standard output at the end
  file_stream_->flush();
  file_->commit();
}

void TextOutput::check_standard_output() {
  std::cout.flush();  // stop at the first piece that cannot be written, not at the end
  ATTN_CHECK(std::cout.good(), "cannot write ", what_, " to standard output");
}

TranslationReport::TranslationReport(bool quiet) : quiet_(quiet), terminal_(!quiet && isatty(STDERR_FILENO)) {}

void TranslationReport::add(const std::vector<decode::Translation>& translations) {
  lines_ += int64_t(translations.size());
  for (const auto& translation : translations)
    if (!translation.nbest.empty()) tokens_ += int64_t(translation.nbest.front().tokens.size());
  if (terminal_ && Clock::now() - last_progress_ >= std::chrono::seconds(1)) {
    last_progress_ = Clock::now();
    std::fprintf(stderr, "\r%lld lines translated, %.1f sentences/s", static_cast<long long>(lines_),
                 lines_ / seconds());
    std::fflush(stderr);
    progress_shown_ = true;
  }
}

void TranslationReport::summary() const {
  if (progress_shown_) std::fputc('\n', stderr);
  if (quiet_) return;
  const double s = seconds();
  spdlog::info("translated {} lines ({} target tokens) in {:.2f} s: {:.1f} sentences/s", lines_, tokens_, s,
               s > 0 ? lines_ / s : 0.0);
}

double TranslationReport::seconds() const { return std::chrono::duration<double>(Clock::now() - start_).count(); }

void translate_windows(const TextInput& input, decode::TranslationWindow& window, const WindowTranslated& translated) {
  io::LineReader reader(input.fd(), input.name());
  std::vector<std::string> lines;  // the window's
  const auto flush = [&] {
    translated(lines, window.translate());
    lines.clear();
  };
  std::string line;
  while (true) {
    // With nothing pending, wait for input as long as it takes; otherwise only for a pause.
    const auto status = reader.next(line, window.empty() ? kWaitForever : kInputPause);
    if (status == io::LineReader::Status::line) {
      lines.push_back(line);
      if (window.add(std::move(line))) flush();
    } else {
      if (!window.empty()) flush();
      if (status == io::LineReader::Status::end) break;
    }
  }
}

}  // namespace attn::apps
