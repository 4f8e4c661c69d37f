#pragma once
// FileLock: an exclusive lock (flock) on a file, which also names its holder: the holder
// writes its process id into the file. The kernel releases the lock when the holder's
// descriptor closes, on any exit or death, SIGKILL included, so a lock is never stale; the
// file itself stays (removing it would race with a process that has just opened it).
#include <optional>
#include <string>
#include <sys/types.h>

namespace attn::io {

class FileLock {
 public:
  // Takes the lock without waiting, creating the file if needed, and writes this process's id
  // into it. nullopt when another open of the file holds the lock (in this process or
  // another). Throws attn::Error naming the file when it cannot be created or locked at all.
  static std::optional<FileLock> try_lock(const std::string& path);

  FileLock(FileLock&& other) noexcept;
  FileLock& operator=(FileLock&& other) noexcept;
  FileLock(const FileLock&) = delete;
  FileLock& operator=(const FileLock&) = delete;
  ~FileLock();  // releases the lock

 private:
  explicit FileLock(int fd) : fd_(fd) {}
  int fd_ = -1;
};

// Whether some open of `path` holds the lock now; false when the file does not exist. Writes
// nothing, so it can be asked before deciding to touch a directory.
bool lock_is_held(const std::string& path);

// The process id written in a held lock file, or 0 when none can be read. The holder writes it
// just after taking the lock, so a reader that saw the lock taken waits up to `wait_seconds`
// for it to appear.
pid_t lock_holder(const std::string& path, double wait_seconds = 1.0);

}  // namespace attn::io
