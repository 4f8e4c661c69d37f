#include "dnnl/context.h"

#include <cstdlib>
#include <omp.h>

namespace attn::dnn {

namespace {
// ATTN_PRIMITIVE_CACHE_CAPACITY overrides the cache's size in entries, as oneDNN's own
// DNNL_PRIMITIVE_CACHE_CAPACITY does its cache's: for measuring the trade of memory for
// primitive creation. Unset, empty or not a positive number: the default.
size_t primitive_cache_capacity() {
  const char* text = std::getenv("ATTN_PRIMITIVE_CACHE_CAPACITY");
  if (!text || !*text) return PrimitiveCache::kDefaultCapacity;
  char* end = nullptr;
  const unsigned long long value = std::strtoull(text, &end, 10);
  return *end == '\0' && value > 0 ? size_t(value) : PrimitiveCache::kDefaultCapacity;
}
}  // namespace

Context::Context() : engine_(dnnl::engine::kind::cpu, 0), stream_(engine_), cache_(primitive_cache_capacity()) {}

Context& Context::get() {
  static Context context;
  return context;
}

void set_num_threads(int threads) {
  if (threads > 0) omp_set_num_threads(threads);
}

int num_threads() { return omp_get_max_threads(); }

}  // namespace attn::dnn
