// FileLock: exclusive, names its holder, and released by the kernel when the holder dies.
#include <csignal>
#include <sys/wait.h>
#include <thread>
#include <unistd.h>

#include <catch2/catch.hpp>

#include "core/check.h"
#include "data/data_fixtures.h"
#include "io/file_lock.h"

using namespace attn;
using attn::testing::TempDir;

TEST_CASE("a file lock is exclusive - names its holder - and is free again once released", "[io][file_lock]") {
  TempDir dir;
  const std::string path = dir.file("train.lock");
  CHECK_FALSE(io::lock_is_held(path));  // no file yet
  {
    std::optional<io::FileLock> first = io::FileLock::try_lock(path);
    REQUIRE(first);
    CHECK(io::lock_holder(path) == getpid());
    CHECK(io::lock_is_held(path));
    CHECK_FALSE(io::FileLock::try_lock(path));  // another open of the file, even in this process
  }
  CHECK_FALSE(io::lock_is_held(path));
  CHECK(io::FileLock::try_lock(path));
}

TEST_CASE("a lock held by a process killed with SIGKILL is free at once", "[io][file_lock]") {
  TempDir dir;
  const std::string path = dir.file("train.lock");
  const pid_t child = fork();
  REQUIRE(child >= 0);
  if (child == 0) {
    std::optional<io::FileLock> lock = io::FileLock::try_lock(path);
    pause();  // until killed
    _exit(0);
  }
  for (int i = 0; i < 500 && io::lock_holder(path, 0) != child; ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  REQUIRE(io::lock_holder(path) == child);
  CHECK(io::lock_is_held(path));
  CHECK_FALSE(io::FileLock::try_lock(path));
  kill(child, SIGKILL);
  REQUIRE(waitpid(child, nullptr, 0) == child);
  CHECK_FALSE(io::lock_is_held(path));
  CHECK(io::FileLock::try_lock(path));
  CHECK(io::lock_holder(path) == getpid());
}

TEST_CASE("a lock file that cannot be created is an error naming it", "[io][file_lock]") {
  TempDir dir;
  const std::string path = dir.file("no/such/dir/train.lock");
  CHECK_THROWS_WITH(io::FileLock::try_lock(path), "cannot create " + path + ": No such file or directory");
}
