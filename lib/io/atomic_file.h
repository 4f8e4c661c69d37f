#pragma once
// AtomicFile: write a file so that a crash, a kill or a full disk at any moment leaves either
// the old file or the complete new one at the path, never a mix or a truncated file.
//
//   1. write everything to PATH.tmp (same directory, hence same file system);
//   2. fsync and close it, both checked (a full disk may only report at this point);
//   3. rename PATH.tmp over PATH (atomic on POSIX file systems);
//   4. fsync the directory, so the rename itself survives a power loss.
// Any failure throws attn::Error naming the file and the system's reason, removes PATH.tmp and
// leaves an existing file at PATH untouched.
#include <cstddef>
#include <string>

namespace attn::io {

class AtomicFile {
 public:
  explicit AtomicFile(std::string path);  // creates PATH.tmp
  ~AtomicFile();                          // removes PATH.tmp unless commit() succeeded
  AtomicFile(const AtomicFile&) = delete;
  AtomicFile& operator=(const AtomicFile&) = delete;

  void write(const void* data, size_t bytes);
  // Steps 2-4 above: after it returns, PATH holds exactly the bytes written.
  void commit();

 private:
  std::string path_, temporary_;
  int fd_ = -1;
  bool committed_ = false;
};

// A whole text file, atomically (config.json of a run, for instance).
void write_file_atomically(const std::string& path, const std::string& text);

}  // namespace attn::io
