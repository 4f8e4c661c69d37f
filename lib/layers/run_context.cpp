#include "layers/run_context.h"

#include "ops/dropout.h"

namespace attn::layers {

Tensor RunContext::dropout(const Tensor& x, float p) const {
  if (!training || p == 0.f) return x;
  ATTN_CHECK(rng, "dropout in training needs a generator");
  return ops::dropout(tape, x, p, true, *rng);
}

}  // namespace attn::layers
