// softmax over the last axis on oneDNN (softmax_v2, which also serves log_softmax).
// Shapes: x, y (..., S) folded to rows (N, S); mask of x's rank, each dim equal to x's or 1.
#include "ops/softmax.h"

#include <oneapi/dnnl/dnnl.hpp>

#include "dnnl/context.h"
#include "dnnl/memory.h"
#include "ops/accumulate.h"

namespace attn::ops {

namespace {

struct SoftmaxForwardEntry {
  dnnl::softmax_v2_forward::primitive_desc pd;
  dnnl::softmax_v2_forward primitive;
};

struct SoftmaxBackwardEntry {
  dnnl::softmax_v2_backward primitive;
};

struct MaskAddEntry {
  dnnl::binary primitive;
};

dnnl::algorithm to_algorithm(SoftmaxKind kind) {
  return kind == SoftmaxKind::softmax ? dnnl::algorithm::softmax_accurate : dnnl::algorithm::softmax_log;
}

Shape rows_of(const Tensor& x) { return {x.numel() / x.dim(-1), x.dim(-1)}; }

SoftmaxForwardEntry& forward_entry(const Shape& rows, SoftmaxKind kind) {
  auto& context = dnn::Context::get();
  dnn::CacheKey key("softmax_fwd");
  key.add(int64_t(kind)).add(rows);
  return context.cache().get<SoftmaxForwardEntry>(key.str(), [&] {
    auto desc = dnn::plain_desc(rows);
    dnnl::softmax_v2_forward::desc op(dnnl::prop_kind::forward_training, to_algorithm(kind), desc, desc, 1);
    dnnl::softmax_v2_forward::primitive_desc pd(op, context.engine());
    return SoftmaxForwardEntry{pd, dnnl::softmax_v2_forward(pd)};
  });
}

SoftmaxBackwardEntry& backward_entry(const Shape& rows, SoftmaxKind kind) {
  auto& context = dnn::Context::get();
  dnn::CacheKey key("softmax_bwd");
  key.add(int64_t(kind)).add(rows);
  return context.cache().get<SoftmaxBackwardEntry>(key.str(), [&] {
    auto desc = dnn::plain_desc(rows);
    dnnl::softmax_v2_backward::desc op(to_algorithm(kind), desc, desc, desc, 1);
    dnnl::softmax_v2_backward::primitive_desc pd(op, context.engine(), forward_entry(rows, kind).pd);
    return SoftmaxBackwardEntry{dnnl::softmax_v2_backward(pd)};
  });
}

void check_mask(const Tensor& x, const Tensor& mask) {
  bool fits = mask.rank() == x.rank();
  for (int axis = 0; fits && axis < x.rank(); ++axis) fits = mask.dim(axis) == x.dim(axis) || mask.dim(axis) == 1;
  ATTN_CHECK(fits, "softmax: mask ", to_string(mask.shape()), " does not fit scores ", to_string(x.shape()),
             " (same rank, each mask dim equal or 1)");
}

// z = x + mask, the mask broadcast over its size-1 dims (oneDNN binary broadcasts src1).
void add_mask(const Tensor& x, const Tensor& mask, const Tensor& z) {
  auto& context = dnn::Context::get();
  auto x_desc = dnn::plain_desc(x.shape());
  auto mask_desc = dnn::plain_desc(mask.shape());
  dnn::CacheKey key("softmax_mask_add");
  key.add(x.shape()).add(mask.shape());
  auto& entry = context.cache().get<MaskAddEntry>(key.str(), [&] {
    dnnl::binary::desc op(dnnl::algorithm::binary_add, x_desc, mask_desc, x_desc);
    return MaskAddEntry{dnnl::binary(dnnl::binary::primitive_desc(op, context.engine()))};
  });
  entry.primitive.execute(context.stream(), {{DNNL_ARG_SRC_0, dnn::wrap(x_desc, x.raw())},
                                             {DNNL_ARG_SRC_1, dnn::wrap(mask_desc, mask.raw())},
                                             {DNNL_ARG_DST, dnn::wrap(x_desc, z.raw())}});
}

}  // namespace

void softmax_rows_forward(const Tensor& x, const Tensor& y, SoftmaxKind kind) {
  Shape rows = rows_of(x);  // (N, S)
  auto desc = dnn::plain_desc(rows);
  auto& context = dnn::Context::get();
  forward_entry(rows, kind)
      .primitive.execute(context.stream(),
                         {{DNNL_ARG_SRC, dnn::wrap(desc, x.raw())}, {DNNL_ARG_DST, dnn::wrap(desc, y.raw())}});
}

// With p = softmax(z), dy = grad(y), per row:
//   softmax:      y = p,      dz_j = p_j (dy_j - sum_k dy_k p_k)
//   log_softmax:  y = log p,  dz_j = dy_j - p_j sum_k dy_k
// oneDNN overwrites diff_src, so it writes a scratch tensor that is then added into grad(x).
void softmax_rows_backward(const Tensor& y, const Tensor& x, SoftmaxKind kind) {
  Shape rows = rows_of(y);               // (N, S)
  Tensor dz = Tensor::empty(y.shape());  // (..., S) scratch
  auto desc = dnn::plain_desc(rows);
  auto& context = dnn::Context::get();
  backward_entry(rows, kind)
      .primitive.execute(context.stream(), {{DNNL_ARG_DST, dnn::wrap(desc, y.raw())},
                                            {DNNL_ARG_DIFF_DST, dnn::wrap(desc, y.grad().raw())},
                                            {DNNL_ARG_DIFF_SRC, dnn::wrap(desc, dz.raw())}});
  accumulate_grad(x, dz);
}

Tensor softmax(Tape& tape, const Tensor& x, const Tensor& mask) {
  ATTN_CHECK(x.rank() >= 1 && x.dim(-1) > 0, "softmax: needs a non-empty last axis, got ", to_string(x.shape()));
  Tensor y = Tensor::empty(x.shape());  // (..., S)
  if (mask.defined()) {
    check_mask(x, mask);
    add_mask(x, mask, y);                              // y = x + mask
    softmax_rows_forward(y, y, SoftmaxKind::softmax);  // in place
  } else {
    softmax_rows_forward(x, y, SoftmaxKind::softmax);
  }

  // The mask is a constant: d(x + mask)/dx = I, so dx is the softmax backward itself.
  if (tape.needs_grad(x)) {
    y.set_requires_grad(true);
    tape.record([x = x.grad_only(), y] {
      if (y.has_grad()) softmax_rows_backward(y, x, SoftmaxKind::softmax);
    });
  }
  return y;
}

}  // namespace attn::ops
