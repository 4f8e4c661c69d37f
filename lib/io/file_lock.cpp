#include "io/file_lock.h"

#include <cerrno>
#include <chrono>
#include <cstring>
#include <fcntl.h>
#include <fstream>
#include <sys/file.h>
#include <thread>
#include <unistd.h>
#include <utility>

#include "core/check.h"

namespace attn::io {

namespace {

std::string system_error() { return std::strerror(errno); }

// Replaces the file's content with "PID\n".
void write_pid(int fd, const std::string& path) {
  const std::string text = std::to_string(::getpid()) + "\n";
  ATTN_CHECK(::ftruncate(fd, 0) == 0 && ::pwrite(fd, text.data(), text.size(), 0) == ssize_t(text.size()),
             "cannot write ", path, ": ", system_error());
}

}  // namespace

std::optional<FileLock> FileLock::try_lock(const std::string& path) {
  int fd = ::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0644);
  ATTN_CHECK(fd >= 0, "cannot create ", path, ": ", system_error());
  FileLock lock(fd);  // closes the descriptor on every way out
  if (::flock(fd, LOCK_EX | LOCK_NB) != 0) {
    ATTN_CHECK(errno == EWOULDBLOCK, "cannot lock ", path, ": ", system_error());
    return std::nullopt;
  }
  write_pid(fd, path);
  return std::optional<FileLock>(std::move(lock));
}

FileLock::FileLock(FileLock&& other) noexcept : fd_(other.fd_) { other.fd_ = -1; }

FileLock& FileLock::operator=(FileLock&& other) noexcept {
  if (this != &other) {
    if (fd_ >= 0) ::close(fd_);
    fd_ = other.fd_;
    other.fd_ = -1;
  }
  return *this;
}

FileLock::~FileLock() {
  if (fd_ >= 0) ::close(fd_);
}

bool lock_is_held(const std::string& path) {
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
  if (fd < 0) return false;
  const bool held = ::flock(fd, LOCK_EX | LOCK_NB) != 0 && errno == EWOULDBLOCK;
  ::close(fd);  // releases the lock if this probe took it
  return held;
}

pid_t lock_holder(const std::string& path, double wait_seconds) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::duration<double>(wait_seconds);
  for (;;) {
    long pid = 0;
    std::ifstream(path) >> pid;
    if (pid > 0 || std::chrono::steady_clock::now() >= deadline) return pid_t(pid > 0 ? pid : 0);
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
}

}  // namespace attn::io
