#include "io/atomic_file.h"

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <unistd.h>

#include "core/check.h"

namespace attn::io {

namespace {

std::string system_error() { return std::strerror(errno); }

std::string directory_of(const std::string& path) {
  size_t slash = path.find_last_of('/');
  if (slash == std::string::npos) return ".";
  return slash == 0 ? "/" : path.substr(0, slash);
}

// The rename is durable only once the directory entry is on disk.
void sync_directory(const std::string& path) {
  const std::string directory = directory_of(path);
  int fd = ::open(directory.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  ATTN_CHECK(fd >= 0, "cannot open directory ", directory, " to sync ", path, ": ", system_error());
  int result = ::fsync(fd);
  std::string reason = result != 0 ? system_error() : "";
  ::close(fd);
  ATTN_CHECK(result == 0, "cannot sync directory ", directory, " after writing ", path, ": ", reason);
}

}  // namespace

AtomicFile::AtomicFile(std::string path) : path_(std::move(path)), temporary_(path_ + ".tmp") {
  // O_NOFOLLOW: a symlink planted at PATH.tmp must not redirect the write elsewhere.
  fd_ = ::open(temporary_.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, 0644);
  ATTN_CHECK(fd_ >= 0, "cannot create ", temporary_, ": ", system_error());
}

AtomicFile::~AtomicFile() {
  if (fd_ >= 0) ::close(fd_);
  if (!committed_) ::unlink(temporary_.c_str());
}

void AtomicFile::write(const void* data, size_t bytes) {
  const char* cursor = static_cast<const char*>(data);
  while (bytes > 0) {
    ssize_t written = ::write(fd_, cursor, std::min<size_t>(bytes, 1u << 30));
    if (written < 0 && errno == EINTR) continue;
    ATTN_CHECK(written > 0, "cannot write ", temporary_, ": ", written < 0 ? system_error() : "no progress");
    cursor += written;
    bytes -= static_cast<size_t>(written);
  }
}

void AtomicFile::commit() {
  ATTN_CHECK(::fsync(fd_) == 0, "cannot sync ", temporary_, ": ", system_error());
  int result = ::close(fd_);
  fd_ = -1;
  ATTN_CHECK(result == 0, "cannot close ", temporary_, ": ", system_error());
  ATTN_CHECK(::rename(temporary_.c_str(), path_.c_str()) == 0, "cannot rename ", temporary_, " to ", path_, ": ",
             system_error());
  committed_ = true;
  sync_directory(path_);
}

void write_file_atomically(const std::string& path, const std::string& text) {
  AtomicFile file(path);
  file.write(text.data(), text.size());
  file.commit();
}

}  // namespace attn::io
