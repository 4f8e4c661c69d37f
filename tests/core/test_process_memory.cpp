#include <cstring>
#include <memory>
#include <vector>

#include <catch2/catch.hpp>

#include "core/process_memory.h"

TEST_CASE("resident_mb counts pages as they are touched and the peak never falls below it", "[core][memory]") {
  const double before = attn::resident_mb();
  CHECK(before > 1);
  constexpr size_t kBytes = size_t(64) << 20;
  std::unique_ptr<char[]> block(new char[kBytes]);
  std::memset(block.get(), 1, kBytes);  // resident only once written
  const double after = attn::resident_mb();
  CHECK(after - before > 48);
  CHECK(attn::peak_resident_mb() >= after - 1);  // ru_maxrss and statm round differently
  CHECK(block[kBytes - 1] == 1);
}

// Sanitizers replace malloc, so glibc's trim has nothing to act on there.
#if defined(__GLIBC__) && !defined(__SANITIZE_ADDRESS__) && !defined(ATTN_SANITIZED)
TEST_CASE("release_free_memory returns freed heap pages that glibc keeps by itself", "[core][memory]") {
  // 96 MiB in small blocks (below the mmap threshold: they live in the heap), then all but the
  // last freed: the last one pins the heap's top, so glibc cannot shrink it and the freed pages
  // stay resident, as the holes that a run's varying batch shapes leave do.
  constexpr size_t kBlock = 1024, kBlocks = (size_t(96) << 20) / kBlock;
  std::vector<std::unique_ptr<char[]>> blocks(kBlocks);
  for (auto& block : blocks) {
    block.reset(new char[kBlock]);
    std::memset(block.get(), 1, kBlock);
  }
  std::unique_ptr<char[]> pin(new char[kBlock]);
  std::memset(pin.get(), 1, kBlock);
  blocks.clear();
  blocks.shrink_to_fit();
  const double freed = attn::resident_mb();
  attn::release_free_memory();
  const double trimmed = attn::resident_mb();
  CHECK(freed - trimmed > 64);  // most of the 96 MiB goes back to the kernel
  CHECK(pin[kBlock - 1] == 1);
}
#endif
