#include <string>

#include <catch2/catch.hpp>

#include "dnnl/primitive_cache.h"

using attn::dnn::PrimitiveCache;

namespace {
struct Counted {
  int value = 0;
};

// Fetches `key`, building an entry of value `value` on a miss; returns the value held.
int fetch(PrimitiveCache& cache, const std::string& key, int value, int* builds) {
  return cache
      .get<Counted>(key,
                    [&] {
                      ++*builds;
                      return Counted{value};
                    })
      .value;
}
}  // namespace

TEST_CASE("primitive cache: builds once per key and counts hits and misses", "[dnnl]") {
  PrimitiveCache cache;
  int builds = 0;
  CHECK(fetch(cache, "a", 1, &builds) == 1);
  CHECK(fetch(cache, "a", 2, &builds) == 1);  // the stored entry, not a new one
  CHECK(fetch(cache, "b", 3, &builds) == 3);
  CHECK(builds == 2);
  CHECK(cache.hits() == 1);
  CHECK(cache.misses() == 2);
  CHECK(cache.size() == 2);
  CHECK(cache.hit_rate() == Approx(1.0 / 3.0));
}

TEST_CASE("primitive cache: holds at most its capacity - evicting the least recently used", "[dnnl]") {
  PrimitiveCache cache(PrimitiveCache::kMinimumCapacity);
  const int capacity = int(cache.capacity());
  int builds = 0;
  for (int i = 0; i < capacity; ++i) fetch(cache, "k" + std::to_string(i), i, &builds);
  fetch(cache, "k0", 0, &builds);  // k0 becomes the most recent: k1 is now the oldest
  fetch(cache, "new", -1, &builds);
  CHECK(cache.size() == size_t(capacity));
  CHECK(cache.evictions() == 1);
  builds = 0;
  fetch(cache, "k0", 0, &builds);  // kept
  CHECK(builds == 0);
  fetch(cache, "k1", 1, &builds);  // evicted, so built again
  CHECK(builds == 1);
}

TEST_CASE("primitive cache: a returned entry survives the fetches of fewer than its capacity others", "[dnnl]") {
  PrimitiveCache cache(PrimitiveCache::kMinimumCapacity);
  int builds = 0;
  for (int i = 0; i < 200; ++i) fetch(cache, "old" + std::to_string(i), i, &builds);
  Counted& held = cache.get<Counted>("held", [] { return Counted{42}; });
  for (size_t i = 0; i + 1 < cache.capacity(); ++i) fetch(cache, "other" + std::to_string(i), 0, &builds);
  CHECK(held.value == 42);
  CHECK(cache.size() == cache.capacity());
}

TEST_CASE("primitive cache: a smaller capacity evicts at once and is never below the minimum", "[dnnl]") {
  PrimitiveCache cache;
  int builds = 0;
  for (int i = 0; i < 100; ++i) fetch(cache, std::to_string(i), i, &builds);
  cache.set_capacity(1);
  CHECK(cache.capacity() == PrimitiveCache::kMinimumCapacity);
  CHECK(cache.size() == PrimitiveCache::kMinimumCapacity);
  builds = 0;
  fetch(cache, "99", 99, &builds);  // the newest stayed
  CHECK(builds == 0);
}
