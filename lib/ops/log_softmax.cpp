// log_softmax over the last axis: oneDNN softmax_v2 with algorithm softmax_log (the v2 API's
// successor of logsoftmax_forward/backward, same math), through the kernels in ops/softmax.h.
// Shapes: x, y (..., V) folded to rows (N, V).
#include "ops/log_softmax.h"

#include "ops/softmax.h"

namespace attn::ops {

Tensor log_softmax(Tape& tape, const Tensor& x) {
  ATTN_CHECK(x.rank() >= 1 && x.dim(-1) > 0, "log_softmax: needs a non-empty last axis, got ", to_string(x.shape()));
  Tensor y = Tensor::empty(x.shape());  // (..., V)
  softmax_rows_forward(x, y, SoftmaxKind::log_softmax);

  // dx_j += dy_j - exp(y_j) sum_k dy_k (derived in softmax_rows_backward).
  if (tape.needs_grad(x)) {
    y.set_requires_grad(true);
    tape.record([x, y] {
      if (y.has_grad()) softmax_rows_backward(y, x, SoftmaxKind::log_softmax);
    });
  }
  return y;
}

}  // namespace attn::ops
