// AtomicFile: the new content appears whole or not at all, and a failed write (a full disk, an
// unwritable place) leaves the old file and no temporary behind.
#include <csignal>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <sys/resource.h>

#include <catch2/catch.hpp>

#include "core/check.h"
#include "io/atomic_file.h"
#include "temp_dir.h"

using namespace attn;
using attn::testing::TempDir;
namespace fs = std::filesystem;

namespace {

std::string read_text(const std::string& path) {
  std::ifstream file(path, std::ios::binary);
  std::stringstream text;
  text << file.rdbuf();
  return text.str();
}

// Lowers this process's file size limit (RLIMIT_FSIZE) for its lifetime: writes past it fail
// with EFBIG, as they fail with ENOSPC on a full disk. SIGXFSZ is ignored meanwhile, so the
// write returns the error instead of killing the process.
class FileSizeLimit {
 public:
  explicit FileSizeLimit(rlim_t bytes) {
    getrlimit(RLIMIT_FSIZE, &saved_);
    previous_handler_ = std::signal(SIGXFSZ, SIG_IGN);
    rlimit lowered = saved_;
    lowered.rlim_cur = bytes;
    setrlimit(RLIMIT_FSIZE, &lowered);
  }
  ~FileSizeLimit() {
    setrlimit(RLIMIT_FSIZE, &saved_);
    std::signal(SIGXFSZ, previous_handler_);
  }

 private:
  rlimit saved_{};
  void (*previous_handler_)(int) = nullptr;
};

}  // namespace

TEST_CASE("write_file_atomically creates and replaces a file - leaving no temporary", "[io][atomic_file]") {
  TempDir dir;
  const std::string path = dir.file("config.json");
  io::write_file_atomically(path, "first");
  CHECK(read_text(path) == "first");
  io::write_file_atomically(path, "second, longer");
  CHECK(read_text(path) == "second, longer");
  CHECK_FALSE(fs::exists(path + ".tmp"));
}

TEST_CASE("a write that runs out of space keeps the old file and removes the temporary", "[io][atomic_file]") {
  TempDir dir;
  const std::string path = dir.file("checkpoint.safetensors");
  io::write_file_atomically(path, "the old checkpoint");
  const std::string big(64 * 1024, 'x');
  std::string error;
  {
    FileSizeLimit limit(16 * 1024);
    try {
      io::write_file_atomically(path, big);
    } catch (const Error& e) {
      error = e.what();
    }
  }
  CHECK(error == "cannot write " + path + ".tmp: File too large");
  CHECK(read_text(path) == "the old checkpoint");
  CHECK_FALSE(fs::exists(path + ".tmp"));
}

TEST_CASE("a file in a place that cannot hold one is a clear error", "[io][atomic_file]") {
  TempDir dir;
  io::write_file_atomically(dir.file("plain"), "a file, not a directory");
  const std::string inside_a_file = dir.file("plain") + "/checkpoint.safetensors";
  CHECK_THROWS_WITH(io::write_file_atomically(inside_a_file, "x"),
                    "cannot create " + inside_a_file + ".tmp: Not a directory");
  const std::string missing = dir.file("no/such/dir/config.json");
  CHECK_THROWS_WITH(io::write_file_atomically(missing, "x"),
                    "cannot create " + missing + ".tmp: No such file or directory");
  // A symlink planted at the temporary path is not followed.
  fs::create_symlink(dir.file("elsewhere"), dir.file("target.tmp"));
  CHECK_THROWS_WITH(io::write_file_atomically(dir.file("target"), "x"), Catch::Contains("cannot create"));
  CHECK_FALSE(fs::exists(dir.file("elsewhere")));
}
