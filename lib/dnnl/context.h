#pragma once
// The process-wide oneDNN CPU engine and stream, the primitive cache, and the thread count.
// One place owns them so that every op shares one OpenMP pool and one cache.
#include <oneapi/dnnl/dnnl.hpp>

#include "dnnl/primitive_cache.h"

namespace attn::dnn {

class Context {
 public:
  static Context& get();

  dnnl::engine& engine() { return engine_; }
  dnnl::stream& stream() { return stream_; }
  PrimitiveCache& cache() { return cache_; }
  // Scratch space for one execution of a primitive made in user scratchpad mode (the matmuls):
  // memory of `desc`'s size over a buffer of the calling thread's, grown as needed and reused by
  // every such execution on that thread. oneDNN's default mode gives each primitive a scratchpad
  // of its own for as long as the primitive lives, so every cached matmul held one: most of a
  // cache entry's memory (docs/performance.md, "Memory").
  dnnl::memory scratchpad(const dnnl::memory::desc& desc);
  // The size of the calling thread's scratchpad buffer: the largest request so far.
  size_t scratchpad_bytes() const;

 private:
  Context();
  dnnl::engine engine_;
  dnnl::stream stream_;
  PrimitiveCache cache_;
};

// Sizes the one OpenMP pool that oneDNN and our own loops share (0 keeps the default).
void set_num_threads(int threads);
int num_threads();

}  // namespace attn::dnn
