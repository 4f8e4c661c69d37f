#include "io/line_reader.h"

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <poll.h>
#include <unistd.h>

#include "core/check.h"

namespace attn::io {

namespace {
constexpr size_t kChunk = 1 << 16;
}

LineReader::LineReader(int fd, std::string name) : fd_(fd), name_(std::move(name)) {}

bool LineReader::take_line(std::string& line) {
  const size_t newline = buffer_.find('\n', scanned_);
  if (newline == std::string::npos) {
    scanned_ = buffer_.size();
    if (!at_end_ || start_ == buffer_.size()) return false;
  }
  const size_t end = newline == std::string::npos ? buffer_.size() : newline;
  line.assign(buffer_, start_, end - start_);
  if (!line.empty() && line.back() == '\r') line.pop_back();
  start_ = scanned_ = std::min(buffer_.size(), end + 1);
  ++lines_read_;
  return true;
}

bool LineReader::wait_readable(std::chrono::steady_clock::time_point deadline, bool forever) {
  while (true) {
    int wait_ms = -1;
    if (!forever) {
      auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
      wait_ms = int(std::max<int64_t>(0, left.count()));
    }
    pollfd descriptor{fd_, POLLIN, 0};
    const int ready = ::poll(&descriptor, 1, wait_ms);
    if (ready > 0) return true;  // data, the end (POLLHUP) or an error: read() tells which
    if (ready == 0) return false;
    ATTN_CHECK(errno == EINTR, "error while reading ", name_, ": ", std::strerror(errno));
  }
}

void LineReader::fill() {
  if (start_ > 0 && start_ >= buffer_.size() / 2) {  // drop what was handed out
    buffer_.erase(0, start_);
    scanned_ -= start_;
    start_ = 0;
  }
  const size_t old_size = buffer_.size();
  buffer_.resize(old_size + kChunk);
  ssize_t got = 0;
  do got = ::read(fd_, buffer_.data() + old_size, kChunk);
  while (got < 0 && errno == EINTR);
  const int error = errno;
  buffer_.resize(old_size + size_t(std::max<ssize_t>(got, 0)));
  ATTN_CHECK(got >= 0, "error while reading ", name_, ": ", std::strerror(error));
  if (got == 0) at_end_ = true;
}

LineReader::Status LineReader::next(std::string& line, std::chrono::milliseconds timeout) {
  const bool forever = timeout.count() < 0;
  const auto deadline = std::chrono::steady_clock::now() + std::max(timeout, std::chrono::milliseconds(0));
  while (true) {
    if (take_line(line)) return Status::line;
    if (at_end_) return Status::end;
    if (!wait_readable(deadline, forever)) return Status::timeout;
    fill();
  }
}

}  // namespace attn::io
