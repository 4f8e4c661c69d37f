#include "dnnl/context.h"

#include <omp.h>

namespace attn::dnn {

Context::Context() : engine_(dnnl::engine::kind::cpu, 0), stream_(engine_) {}

Context& Context::get() {
  static Context context;
  return context;
}

void set_num_threads(int threads) {
  if (threads > 0) omp_set_num_threads(threads);
}

int num_threads() { return omp_get_max_threads(); }

}  // namespace attn::dnn
