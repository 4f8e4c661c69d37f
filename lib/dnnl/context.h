#pragma once
// The process-wide oneDNN CPU engine, and each thread's primitive cache, stream and scratch
// space. oneDNN runs single-threaded on every thread that uses it: attn's own threads
// (core/parallel.h) share the work out, ops::gemm in row or column blocks.
#include <oneapi/dnnl/dnnl.hpp>

#include "dnnl/primitive_cache.h"

namespace attn::dnn {

class Context {
 public:
  static Context& get();

  dnnl::engine& engine() { return engine_; }
  // The calling thread's stream (a stream is not shared between threads).
  dnnl::stream& stream();
  // The calling thread's primitive cache. A cache is not thread-safe, and two threads that
  // decode batches of their own at once (decode/translator.h) fetch primitives at once; a
  // loop cut into pieces fetches every primitive on its calling thread (dnnl/pieces.h), so the
  // pool's workers keep theirs empty. oneDNN's own cache shares the jitted kernels between them.
  PrimitiveCache& cache();
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
};

}  // namespace attn::dnn
