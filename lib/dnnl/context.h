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
