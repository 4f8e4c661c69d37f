#include "ops/matmul.h"

#include "ops/gemm.h"

namespace attn::ops {

namespace {

// a of rank > 2 against a rank-2 b: fold a's leading axes into its rows.
Tensor fold_rows(const Tensor& a) { return a.view({a.numel() / a.dim(-1), a.dim(-1)}); }

Shape output_shape(const Tensor& a, const Tensor& b, const MatmulOptions& options) {
  Shape shape = a.shape();
  shape[shape.size() - 2] = options.transpose_a ? a.dim(-1) : a.dim(-2);
  shape.back() = options.transpose_b ? b.dim(-2) : b.dim(-1);
  return shape;
}

// Backward of c = alpha op(a) op(b):
//   d op(a) = alpha dc op(b)^T   ->  da += alpha dc op(b)^T,  or (transposed) da += alpha op(b) dc^T
//   d op(b) = alpha op(a)^T dc   ->  db += alpha op(a)^T dc,  or (transposed) db += alpha dc^T op(a)
void matmul_backward(const Tensor& a, const Tensor& b, const Tensor& c, const MatmulOptions& options) {
  if (!c.has_grad()) return;
  MatrixView dc = MatrixView::grad_of(c);
  MatrixView op_a = MatrixView::of(a).transposed_if(options.transpose_a);
  MatrixView op_b = MatrixView::of(b).transposed_if(options.transpose_b);
  if (a.requires_grad()) {
    GradientTarget da = gradient_target(a, options.alpha);
    da.options.precision = options.precision;
    if (options.transpose_a)
      gemm(op_b, dc.transposed(), da.view, da.options);
    else
      gemm(dc, op_b.transposed(), da.view, da.options);
  }
  if (b.requires_grad()) {
    GradientTarget db = gradient_target(b, options.alpha);
    db.options.precision = options.precision;
    if (options.transpose_b)
      gemm(dc.transposed(), op_a, db.view, db.options);
    else
      gemm(op_a.transposed(), dc, db.view, db.options);
  }
}

}  // namespace

Tensor matmul(Tape& tape, const Tensor& a_in, const Tensor& b, const MatmulOptions& options) {
  ATTN_CHECK(a_in.rank() >= 2 && b.rank() >= 2, "matmul: operands need rank >= 2, got ", to_string(a_in.shape()),
             " and ", to_string(b.shape()));
  bool shared_b = b.rank() == 2 && a_in.rank() > 2;
  ATTN_CHECK(!shared_b || !options.transpose_a, "matmul: a rank-2 b cannot be used with a transposed batched a");
  ATTN_CHECK(shared_b || a_in.rank() == b.rank(), "matmul: ranks differ: ", to_string(a_in.shape()), " and ",
             to_string(b.shape()));
  Tensor a = shared_b ? fold_rows(a_in) : a_in;

  Tensor c = Tensor::empty(output_shape(a, b, options));  // (..., M, N)
  GemmOptions product = GemmOptions::overwrite(options.alpha);
  product.precision = options.precision;
  gemm(MatrixView::of(a).transposed_if(options.transpose_a), MatrixView::of(b).transposed_if(options.transpose_b),
       MatrixView::of(c), product);

  if (tape.needs_grad(a, b)) {
    c.set_requires_grad(true);
    tape.record([a, b, c = c.grad_only(), options] { matmul_backward(a, b, c, options); });
  }
  if (!shared_b) return c;
  Shape shape = a_in.shape();
  shape.back() = c.dim(-1);
  return c.view(shape);
}

}  // namespace attn::ops
