#include <catch2/catch.hpp>

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
