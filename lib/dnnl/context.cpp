#include "dnnl/context.h"

#include <cstdlib>
#include <memory>
#include <new>
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

// Per thread, so that primitives executing on two threads at once never share it; on one thread
// executions run one after another (the CPU stream is synchronous).
struct ScratchpadBuffer {
  std::unique_ptr<void, decltype(&std::free)> data{nullptr, &std::free};
  size_t bytes = 0;
};
thread_local ScratchpadBuffer scratchpad_buffer;
}  // namespace

Context::Context() : engine_(dnnl::engine::kind::cpu, 0) {}

PrimitiveCache& Context::cache() {
  thread_local PrimitiveCache cache(primitive_cache_capacity());
  return cache;
}

dnnl::stream& Context::stream() {
  thread_local dnnl::stream stream(engine_);
  return stream;
}

dnnl::memory Context::scratchpad(const dnnl::memory::desc& desc) {
  ScratchpadBuffer& buffer = scratchpad_buffer;
  const size_t needed = desc.get_size();
  if (needed > buffer.bytes) {
    constexpr size_t kAlignment = 64;  // a cache line, as oneDNN aligns its own
    const size_t bytes = (needed + kAlignment - 1) / kAlignment * kAlignment;
    buffer.data.reset(std::aligned_alloc(kAlignment, bytes));
    if (!buffer.data) throw std::bad_alloc();
    buffer.bytes = bytes;
  }
  return dnnl::memory(desc, engine_, buffer.data.get());
}

size_t Context::scratchpad_bytes() const { return scratchpad_buffer.bytes; }

Context& Context::get() {
  static Context context;
  // oneDNN runs on OpenMP and sizes a primitive's work for the thread count in force where the
  // primitive is made: one thread, on every thread that reaches oneDNN through here, keeps it
  // from starting a team of its own beside attn's threads.
  thread_local const bool single_threaded = (omp_set_num_threads(1), true);
  (void)single_threaded;
  return context;
}

}  // namespace attn::dnn
