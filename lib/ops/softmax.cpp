// softmax over the last axis on oneDNN (softmax_v2, which also serves log_softmax).
// Shapes: x, y (..., S) folded to rows (N, S); mask of x's rank, each dim equal to x's or 1.
#include "ops/softmax.h"

#include <utility>

#include <oneapi/dnnl/dnnl.hpp>

#include "dnnl/context.h"
#include "dnnl/memory.h"
#include "dnnl/pieces.h"
#include "ops/accumulate.h"

namespace attn::ops {

namespace {

struct SoftmaxForwardEntry {
  dnnl::softmax_v2_forward::primitive_desc pd;
  dnnl::softmax_v2_forward primitive;
  dnnl::memory::desc scratchpad;
};

struct SoftmaxBackwardEntry {
  dnnl::softmax_v2_backward primitive;
  dnnl::memory::desc scratchpad;
};

struct MaskAddEntry {
  dnnl::binary primitive;
  dnnl::memory::desc scratchpad;
};

dnnl::algorithm to_algorithm(SoftmaxKind kind) {
  return kind == SoftmaxKind::softmax ? dnnl::algorithm::softmax_accurate : dnnl::algorithm::softmax_log;
}

SoftmaxForwardEntry& forward_entry(const Shape& rows, SoftmaxKind kind) {
  auto& context = dnn::Context::get();
  dnn::CacheKey key("softmax_fwd");
  key.add(int64_t(kind)).add(rows);
  return context.cache().get<SoftmaxForwardEntry>(key.str(), [&] {
    auto desc = dnn::plain_desc(rows);
    dnnl::softmax_v2_forward::desc op(dnnl::prop_kind::forward_training, to_algorithm(kind), desc, desc, 1);
    dnnl::softmax_v2_forward::primitive_desc pd(op, dnn::piece_attr(), context.engine());
    return SoftmaxForwardEntry{pd, dnnl::softmax_v2_forward(pd), pd.scratchpad_desc()};
  });
}

SoftmaxBackwardEntry& backward_entry(const Shape& rows, SoftmaxKind kind) {
  auto& context = dnn::Context::get();
  dnn::CacheKey key("softmax_bwd");
  key.add(int64_t(kind)).add(rows);
  return context.cache().get<SoftmaxBackwardEntry>(key.str(), [&] {
    auto desc = dnn::plain_desc(rows);
    dnnl::softmax_v2_backward::desc op(to_algorithm(kind), desc, desc, desc, 1);
    dnnl::softmax_v2_backward::primitive_desc pd(op, dnn::piece_attr(), context.engine(), forward_entry(rows, kind).pd);
    return SoftmaxBackwardEntry{dnnl::softmax_v2_backward(pd), pd.scratchpad_desc()};
  });
}

void check_mask(const Tensor& x, const Tensor& mask) {
  bool fits = mask.rank() == x.rank();
  for (int axis = 0; fits && axis < x.rank(); ++axis) fits = mask.dim(axis) == x.dim(axis) || mask.dim(axis) == 1;
  ATTN_CHECK(fits, "softmax: mask ", to_string(mask.shape()), " does not fit scores ", to_string(x.shape()),
             " (same rank, each mask dim equal or 1)");
}

MaskAddEntry& mask_add_entry(const Shape& x_shape, const Shape& mask_shape) {
  auto& context = dnn::Context::get();
  dnn::CacheKey key("softmax_mask_add");
  key.add(x_shape).add(mask_shape);
  return context.cache().get<MaskAddEntry>(key.str(), [&] {
    auto x_desc = dnn::plain_desc(x_shape);
    dnnl::binary::desc op(dnnl::algorithm::binary_add, x_desc, dnn::plain_desc(mask_shape), x_desc);
    dnnl::binary::primitive_desc pd(op, dnn::piece_attr(), context.engine());
    return MaskAddEntry{dnnl::binary(pd), pd.scratchpad_desc()};
  });
}

// z = x + mask, the mask broadcast over its size-1 dims (oneDNN binary broadcasts src1), in
// pieces of x's first axis: a piece adds the matching piece of the mask, or all of it when the
// mask is broadcast over that axis.
void add_mask(const Tensor& x, const Tensor& mask, const Tensor& z) {
  if (x.numel() == 0) return;
  const int64_t count = x.dim(0), x_item = x.numel() / count;
  const bool mask_broadcast = mask.dim(0) == 1;
  const int64_t mask_item = mask.numel() / mask.dim(0);
  const float* x_values = x.data();
  const float* mask_values = mask.data();
  const float* z_values = z.data();
  auto shapes = [&](int64_t items) {
    std::pair<Shape, Shape> result{x.shape(), mask.shape()};
    result.first[0] = items;
    if (!mask_broadcast) result.second[0] = items;
    return result;
  };
  dnn::run_in_pieces(
      count, piece_count(count, x_item, kParallelPass),
      [&](int64_t items) -> MaskAddEntry& {
        const auto [x_shape, mask_shape] = shapes(items);
        return mask_add_entry(x_shape, mask_shape);
      },
      [&](const MaskAddEntry& entry, int64_t, int64_t first, int64_t last) {
        const auto [x_shape, mask_shape] = shapes(last - first);
        const auto x_desc = dnn::plain_desc(x_shape);
        const float* mask_first = mask_values + (mask_broadcast ? 0 : first * mask_item);
        dnn::execute(entry.primitive, entry.scratchpad,
                     {{DNNL_ARG_SRC_0, dnn::wrap(x_desc, x_values + first * x_item)},
                      {DNNL_ARG_SRC_1, dnn::wrap(dnn::plain_desc(mask_shape), mask_first)},
                      {DNNL_ARG_DST, dnn::wrap(x_desc, z_values + first * x_item)}});
      });
}

// A softmax's or log-softmax's row work, forward or backward: a few passes over the row, one
// with an exponential.
int64_t softmax_pieces(int64_t rows, int64_t width) { return piece_count(rows, 4 * width); }

// Rows [first, last) of a (..., S) tensor seen as (N, S).
dnnl::memory rows_of(const Tensor& t, int64_t first, int64_t last) {
  const int64_t width = t.dim(-1);
  return dnn::wrap(dnn::plain_desc({last - first, width}), t.data() + first * width);
}

}  // namespace

void softmax_rows_forward(const Tensor& x, const Tensor& y, SoftmaxKind kind) {
  const int64_t count = x.numel() / x.dim(-1), width = x.dim(-1);  // rows (N, S)
  dnn::run_in_pieces(
      count, softmax_pieces(count, width),
      [&](int64_t rows) -> SoftmaxForwardEntry& {
        return forward_entry({rows, width}, kind);
      },
      [&](const SoftmaxForwardEntry& entry, int64_t, int64_t first, int64_t last) {
        dnn::execute(entry.primitive, entry.scratchpad,
                     {{DNNL_ARG_SRC, rows_of(x, first, last)}, {DNNL_ARG_DST, rows_of(y, first, last)}});
      });
}

// With p = softmax(z), dy = grad(y), per row:
//   softmax:      y = p,      dz_j = p_j (dy_j - sum_k dy_k p_k)
//   log_softmax:  y = log p,  dz_j = dy_j - p_j sum_k dy_k
// oneDNN overwrites diff_src, so it writes a scratch tensor that is then added into grad(x).
void softmax_rows_backward(const Tensor& y, const Tensor& x, SoftmaxKind kind) {
  const int64_t count = y.numel() / y.dim(-1), width = y.dim(-1);  // rows (N, S)
  const Tensor dz = Tensor::empty(y.shape());                      // (..., S) scratch
  const Tensor dy = y.grad();
  dnn::run_in_pieces(
      count, softmax_pieces(count, width),
      [&](int64_t rows) -> SoftmaxBackwardEntry& {
        return backward_entry({rows, width}, kind);
      },
      [&](const SoftmaxBackwardEntry& entry, int64_t, int64_t first, int64_t last) {
        dnn::execute(entry.primitive, entry.scratchpad,
                     {{DNNL_ARG_DST, rows_of(y, first, last)},
                      {DNNL_ARG_DIFF_DST, rows_of(dy, first, last)},
                      {DNNL_ARG_DIFF_SRC, rows_of(dz, first, last)}});
      });
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
