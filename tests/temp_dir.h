#pragma once
// A fresh directory under the system's temporary directory, removed with its contents at the
// end of the test.
#include <filesystem>
#include <string>

namespace attn::testing {

class TempDir {
 public:
  TempDir();
  ~TempDir();
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;

  const std::filesystem::path& path() const { return path_; }
  std::string file(const std::string& name) const { return (path_ / name).string(); }

 private:
  std::filesystem::path path_;
};

}  // namespace attn::testing
