#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include <catch2/catch.hpp>

#include "core/parallel.h"
#include "thread_count.h"

using namespace attn;
using attn::testing::ThreadCount;

namespace {

// How many times parallel_for visited each index of [0, count).
std::vector<int> visits(int64_t count, int64_t item_work) {
  std::vector<std::atomic<int>> seen(static_cast<size_t>(count));
  parallel_for(count, item_work, [&](int64_t first, int64_t last) {
    CHECK(first < last);
    for (int64_t i = first; i < last; ++i) seen[size_t(i)].fetch_add(1);
  });
  return std::vector<int>(seen.begin(), seen.end());
}

}  // namespace

TEST_CASE("parallel_for visits every index exactly once at any thread count", "[core][parallel]") {
  for (int threads : {1, 2, 3, 5}) {
    ThreadCount scope(threads);
    for (int64_t count : {int64_t(1), int64_t(7), int64_t(1000), int64_t(100003)}) {
      DYNAMIC_SECTION(threads << " threads, " << count << " items") {
        const uint64_t before = parallel_loops_started();
        const std::vector<int> seen = visits(count, 64);
        CHECK(std::count(seen.begin(), seen.end(), 1) == count);
        const bool handed_out = threads > 1 && count * 64 > kParallelWork;
        CHECK(parallel_loops_started() - before == (handed_out ? 1u : 0u));
      }
    }
  }
}

TEST_CASE("a loop is cut into more pieces than threads only when its work pays for them", "[core][parallel]") {
  ThreadCount scope(2);
  CHECK(piece_count(1000, 1) == 1);                         // 1,000 element-operations: inline
  CHECK(piece_count(1, 1 << 30) == 1);                      // one item cannot be shared
  CHECK(piece_count(kParallelWork, 2) >= 2);                // twice the threshold: one a thread at least
  CHECK(piece_count(1 << 20, 64) == 8);                     // large: four a thread
  CHECK(piece_count(3, 1 << 20) == 3);                      // never more pieces than items
  CHECK(piece_count(1 << 20, 1, kParallelPass * 64) == 1);  // a caller's own threshold
}

TEST_CASE("parallel_sum adds the pieces in order - the same at every thread count", "[core][parallel]") {
  auto sum = [] {
    return parallel_sum<double>(1 << 20, 1, kParallelWork, [](int64_t first, int64_t last) {
      double partial = 0;
      for (int64_t i = first; i < last; ++i) partial += 1.0 / double(i + 1);
      return partial;
    });
  };
  ThreadCount scope(2);
  const double two = sum();
  const double again = sum();
  CHECK(two == again);  // exact: the pieces and their order depend on the counts only
  double serial = 0;
  for (int64_t i = 0; i < (1 << 20); ++i) serial += 1.0 / double(i + 1);
  CHECK(two == Approx(serial).epsilon(1e-12));
}

TEST_CASE("an exception in a piece reaches the caller and the threads stay usable", "[core][parallel]") {
  ThreadCount scope(2);
  auto failing = [] {
    parallel_for(1 << 16, 16, [](int64_t first, int64_t last) {
      if (first <= 1000 && 1000 < last) throw std::runtime_error("piece failed");
    });
  };
  CHECK_THROWS_WITH(failing(), "piece failed");
  CHECK(!in_parallel_piece());
  const std::vector<int> seen = visits(1 << 16, 16);
  CHECK(std::count(seen.begin(), seen.end(), 1) == (1 << 16));
}

TEST_CASE("a loop inside a piece runs inline on that piece's thread", "[core][parallel]") {
  ThreadCount scope(2);
  std::atomic<int64_t> inner_items{0};
  std::atomic<int> inline_loops{0};
  parallel_for(64, kParallelWork, [&](int64_t first, int64_t last) {
    for (int64_t i = first; i < last; ++i) {
      CHECK(in_parallel_piece());
      CHECK(piece_count(1 << 20, 64) == 1);
      const std::thread::id self = std::this_thread::get_id();
      parallel_for(1 << 20, 64, [&](int64_t inner_first, int64_t inner_last) {
        if (std::this_thread::get_id() == self) inline_loops.fetch_add(1);
        inner_items.fetch_add(inner_last - inner_first);
      });
    }
  });
  CHECK(inner_items.load() == 64 * (int64_t(1) << 20));
  CHECK(inline_loops.load() == 64);  // each inner loop one call, on the thread that started it
}

TEST_CASE("two threads starting loops at once both get every index", "[core][parallel]") {
  ThreadCount scope(2);
  std::vector<int> first_seen, second_seen;
  std::thread other([&] {
    for (int round = 0; round < 50; ++round) second_seen = visits(20000, 64);
  });
  for (int round = 0; round < 50; ++round) first_seen = visits(20000, 64);
  other.join();
  CHECK(std::count(first_seen.begin(), first_seen.end(), 1) == 20000);
  CHECK(std::count(second_seen.begin(), second_seen.end(), 1) == 20000);
}

TEST_CASE("the default thread count follows OMP_NUM_THREADS when it is set - else one per core", "[core][parallel]") {
  const char* before = std::getenv("OMP_NUM_THREADS");
  const std::string saved = before ? before : "";
  const int cores = int(std::max(1u, std::thread::hardware_concurrency()));
  setenv("OMP_NUM_THREADS", "3", 1);
  set_parallel_threads(0);
  CHECK(parallel_threads() == 3);
  setenv("OMP_NUM_THREADS", "none", 1);  // not a count: ignored
  set_parallel_threads(0);
  CHECK(parallel_threads() == cores);
  unsetenv("OMP_NUM_THREADS");
  set_parallel_threads(0);
  CHECK(parallel_threads() == cores);
  set_parallel_threads(5);  // an explicit count wins
  CHECK(parallel_threads() == 5);
  if (before) setenv("OMP_NUM_THREADS", saved.c_str(), 1);
  set_parallel_threads(0);
}
