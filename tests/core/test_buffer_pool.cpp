#include <algorithm>

#include <catch2/catch.hpp>

#include "core/buffer.h"
#include "core/buffer_pool.h"
#include "core/tensor.h"

using attn::BufferPool;

TEST_CASE("freed tensor storage is reused for the next tensor of a similar size", "[core][buffer_pool]") {
  auto& pool = BufferPool::instance();
  const void* first_block = nullptr;
  {
    attn::Tensor a = attn::Tensor::empty({1000, 37});
    first_block = a.raw();
  }
  uint64_t reuses = pool.reuses();
  attn::Tensor b = attn::Tensor::empty({1000, 36});  // 144000 bytes: same size class as 148000
  CHECK(pool.reuses() == reuses + 1);
  CHECK(b.raw() == first_block);
}

TEST_CASE("zero-filled buffers are zero even when their block is reused", "[core][buffer_pool]") {
  { attn::Tensor dirty = attn::Tensor::full({512}, 7.f); }
  attn::Tensor clean = attn::Tensor::zeros({512});
  for (float value : clean.to_vector()) REQUIRE(value == 0.f);
}

TEST_CASE("the pool keeps no more free bytes than its capacity", "[core][buffer_pool]") {
  auto& pool = BufferPool::instance();
  pool.trim();
  pool.set_capacity(1 << 20);
  { attn::Tensor big = attn::Tensor::empty({1 << 20}); }  // 4 MiB: over capacity, freed
  CHECK(pool.cached_bytes() == 0);
  { attn::Tensor small = attn::Tensor::empty({1024}); }
  CHECK(pool.cached_bytes() > 0);
  CHECK(pool.cached_bytes() <= (1 << 20));
  pool.set_capacity(size_t(4) << 30);
}

namespace {
constexpr int64_t kMiB = (1 << 20) / sizeof(float);  // floats in one MiB
// The step limit for a live high-water mark of `bytes`: an eighth more, at least the least slack.
size_t with_slack(size_t bytes) {
  return bytes + std::max(bytes / BufferPool::kSlackDivisor, BufferPool::kMinSlackBytes);
}
}  // namespace

TEST_CASE("once a step has ended live and free blocks stay within its live high-water mark", "[core][buffer_pool]") {
  auto& pool = BufferPool::instance();
  pool.trim();
  size_t before = pool.stats().live_bytes;
  {
    attn::Tensor a = attn::Tensor::empty({4 * kMiB});
    attn::Tensor b = attn::Tensor::empty({2 * kMiB});
  }
  pool.end_step();  // high-water mark: before + 6 MiB
  BufferPool::Stats step = pool.stats();
  CHECK(step.limit_bytes == with_slack(before + (size_t(6) << 20)));
  CHECK(step.cached_bytes == size_t(6) << 20);
  {
    // Other shapes: 3 MiB and 5 MiB classes. Each new block first evicts free blocks it
    // would push over the limit, so live + cached never exceed it while live fits.
    attn::Tensor c = attn::Tensor::empty({3 * kMiB});
    BufferPool::Stats now = pool.stats();
    CHECK(now.live_bytes + now.cached_bytes <= now.limit_bytes);
    attn::Tensor d = attn::Tensor::empty({3 * kMiB});
    now = pool.stats();
    CHECK(now.live_bytes + now.cached_bytes <= now.limit_bytes);
  }
  BufferPool::Stats after = pool.stats();
  CHECK(after.live_bytes + after.cached_bytes <= after.limit_bytes);
  pool.trim();
}

TEST_CASE("a step of another shape frees the size classes of the old one", "[core][buffer_pool]") {
  auto& pool = BufferPool::instance();
  pool.trim();
  // Sizes above the least slack, so that the two blocks together are over the limit.
  static_assert(BufferPool::kMinSlackBytes < (size_t(64) << 20), "the shapes must outgrow the slack");
  { attn::Tensor old_shape = attn::Tensor::empty({64 * kMiB}); }
  pool.end_step();
  CHECK(pool.cached_bytes() == size_t(64) << 20);
  {
    attn::Tensor new_shape = attn::Tensor::empty({80 * kMiB});  // 80 MiB class: the 64 MiB block cannot serve it
    CHECK(pool.cached_bytes() == 0);                            // ... so it went back to the system first
  }
  pool.end_step();
  // The new shape's block is what the pool keeps now; the limit covers the larger step.
  CHECK(pool.cached_bytes() == size_t(80) << 20);
  CHECK(pool.stats().limit_bytes >= size_t(80) << 20);
  pool.trim();
}

TEST_CASE("steps that take a new size near their peak reuse every block once the limit is set", "[core][buffer_pool]") {
  // A backward in small: two 8 MiB activations live (the peak), one freed, then a 1 MiB
  // gradient of a class nobody freed. At a limit of exactly the peak that block would evict the
  // freed activation, and the next step would map it anew; the slack keeps it.
  auto& pool = BufferPool::instance();
  pool.trim();
  auto step = [] {
    attn::Tensor a = attn::Tensor::empty({8 * kMiB});
    attn::Tensor b = attn::Tensor::empty({8 * kMiB});
    a = attn::Tensor();
    attn::Tensor gradient = attn::Tensor::empty({kMiB});
  };
  for (int i = 0; i < 2; ++i) {
    step();
    pool.end_step();
  }
  uint64_t reuses = pool.reuses();
  for (int i = 0; i < 3; ++i) {
    step();
    pool.end_step();
  }
  CHECK(pool.reuses() == reuses + 9);  // all three blocks of each of the three steps
  pool.trim();
}

TEST_CASE("the step limit is the largest high-water mark of the last steps", "[core][buffer_pool]") {
  auto& pool = BufferPool::instance();
  pool.trim();
  size_t base = pool.stats().live_bytes;
  { attn::Tensor big = attn::Tensor::empty({64 * kMiB}); }  // more than the slack
  pool.end_step();
  for (size_t step = 1; step < BufferPool::kStepWindow; ++step) {
    { attn::Tensor small = attn::Tensor::empty({kMiB}); }
    pool.end_step();
    CHECK(pool.stats().limit_bytes == with_slack(base + (size_t(64) << 20)));  // the big step is still in the window
  }
  { attn::Tensor small = attn::Tensor::empty({kMiB}); }
  pool.end_step();  // the big step has left the window
  CHECK(pool.stats().limit_bytes == with_slack(base + (size_t(1) << 20)));
  CHECK(pool.stats().live_bytes + pool.cached_bytes() <= with_slack(base + (size_t(1) << 20)));
  pool.trim();
}

TEST_CASE("a free block of a somewhat larger class serves a request whose class has none", "[core][buffer_pool]") {
  auto& pool = BufferPool::instance();
  pool.trim();
  const void* block = nullptr;
  {
    attn::Tensor larger = attn::Tensor::empty({5 * kMiB});
    block = larger.raw();
  }
  {
    attn::Tensor smaller = attn::Tensor::empty({4 * kMiB});  // 4 MiB class: 5 MiB is within 1.5 x
    CHECK(smaller.raw() == block);
  }
  CHECK(pool.cached_bytes() == size_t(5) << 20);  // it returns to its own class
  {
    attn::Tensor much_smaller = attn::Tensor::empty({3 * kMiB});  // 5 MiB is more than 1.5 x 3 MiB
    CHECK(much_smaller.raw() != block);
  }
  pool.trim();
}

TEST_CASE("a buffer zeroed on touch is all zeros - and a new block even when a free one would fit",
          "[core][buffer_pool]") {
  auto& pool = BufferPool::instance();
  pool.trim();
  for (size_t bytes : {size_t(1000), size_t(3) << 20}) {  // a heap block and a mapped one
    INFO(bytes << " bytes");
    {
      attn::Buffer dirty(bytes, false);
      std::fill_n(static_cast<char*>(dirty.data()), bytes, char(7));
    }
    REQUIRE(pool.cached_bytes() > 0);  // the dirty block is free for reuse
    const uint64_t reuses = pool.reuses();
    auto zeroed = attn::Buffer::zeroed_on_touch(bytes);
    CHECK(pool.reuses() == reuses);
    CHECK(zeroed->bytes() == bytes);
    const char* data = static_cast<const char*>(zeroed->data());
    CHECK(std::all_of(data, data + bytes, [](char value) { return value == 0; }));
    pool.trim();
  }
}
