#pragma once
// LineReader: the lines of a file descriptor one at a time, with a time limit on the wait for
// the next one, so that attn-translate can translate what it has as soon as its input pauses
// (a pipe, a terminal) instead of waiting for the end of the input.
//
// Lines follow data::read_lines: split on "\n", a trailing "\r" dropped, every other byte kept
// (invalid UTF-8 and NUL included), a last line without "\n" still counts. Memory is one
// read-ahead chunk plus the line being read, whatever the input's size.
#include <chrono>
#include <string>

namespace attn::io {

class LineReader {
 public:
  enum class Status { line, timeout, end };

  // Reads `fd` (not owned: the caller closes it); `name` is for error messages.
  LineReader(int fd, std::string name);

  // The next line into `line`: Status::line. Status::timeout when no complete line arrived
  // within `timeout` (a negative timeout waits for ever); Status::end after the last line. A
  // read error throws attn::Error naming the input.
  Status next(std::string& line, std::chrono::milliseconds timeout);

  int64_t lines_read() const { return lines_read_; }

 private:
  bool take_line(std::string& line);  // a complete line (or the last one at the end) from the buffer
  bool wait_readable(std::chrono::steady_clock::time_point deadline, bool forever);
  void fill();  // one read() into the buffer; sets at_end_ at the end of the input

  int fd_;
  std::string name_;
  std::string buffer_;
  size_t start_ = 0;    // where the unread part of buffer_ begins
  size_t scanned_ = 0;  // buffer_[start_, scanned_) holds no "\n"
  bool at_end_ = false;
  int64_t lines_read_ = 0;
};

}  // namespace attn::io
