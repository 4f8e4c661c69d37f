#include <cstring>
#include <memory>

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
