#include "ops/heads.h"

#include <cstring>

#include <oneapi/dnnl/dnnl.hpp>

#include "dnnl/context.h"
#include "dnnl/memory.h"
#include "dnnl/pieces.h"

namespace attn::ops {

namespace {

struct ReorderEntry {
  dnnl::reorder primitive;
  dnnl::memory::desc scratchpad;
};

// A (B, T, W) buffer's D = H * Dh columns from `first` on, seen as (B, H, T, Dh) through
// strides: no data moves.
struct HeadLayout {
  Shape dims;         // (B, H, T, Dh)
  Shape strides;      // (T * W, Dh, W, 1)
  int64_t first = 0;  // the element offset of column `first`
};

HeadLayout head_layout(int64_t batch, int64_t heads, int64_t length, int64_t head_width, int64_t row_width,
                       int64_t first) {
  return {{batch, heads, length, head_width}, {length * row_width, head_width, row_width, 1}, first};
}

// A decoding step's heads (B x H rows of Dh for one position, or B x K x H in beam search):
// below this many elements, copying the rows in a loop costs less than a oneDNN call's dispatch.
constexpr int64_t kSmallHeads = 65536;

// The same move as the reorder below, without a change of dtype or a sum: a copy of each
// head's Dh elements, bit for bit what the reorder writes.
void copy_heads(const HeadLayout& layout, bool to_plain, size_t element_bytes, const void* source, void* target) {
  const int64_t batch = layout.dims[0], heads = layout.dims[1], length = layout.dims[2];
  const size_t row_bytes = size_t(layout.dims[3]) * element_bytes;
  const char* from = static_cast<const char*>(source);
  char* to = static_cast<char*>(target);
  for (int64_t b = 0; b < batch; ++b)
    for (int64_t h = 0; h < heads; ++h)
      for (int64_t t = 0; t < length; ++t) {
        const int64_t plain = ((b * heads + h) * length + t) * layout.dims[3];
        const int64_t strided = b * layout.strides[0] + h * layout.strides[1] + t * layout.strides[2];
        const int64_t from_element = to_plain ? strided : plain, to_element = to_plain ? plain : strided;
        std::memcpy(to + to_element * int64_t(element_bytes), from + from_element * int64_t(element_bytes), row_bytes);
      }
}

// The source and target of a reorder of `batch` rows of the layout's first axis.
struct ReorderDescs {
  dnnl::memory::desc source, target;
};

ReorderDescs reorder_descs(const HeadLayout& layout, int64_t batch, bool to_plain, DType source_dtype,
                           DType target_dtype) {
  Shape dims = layout.dims;  // (batch, H, T, Dh)
  dims[0] = batch;
  if (to_plain) return {dnn::strided_desc(dims, layout.strides, source_dtype), dnn::plain_desc(dims, target_dtype)};
  return {dnn::plain_desc(dims, source_dtype), dnn::strided_desc(dims, layout.strides, target_dtype)};
}

ReorderEntry& reorder_entry(const HeadLayout& layout, int64_t batch, bool to_plain, DType source_dtype,
                            DType target_dtype, bool accumulate) {
  auto& context = dnn::Context::get();
  Shape dims = layout.dims;
  dims[0] = batch;
  dnn::CacheKey key("heads_reorder");
  key.add(dims).add(layout.strides).add(int64_t(to_plain)).add(int64_t(accumulate));
  key.add(int64_t(source_dtype)).add(int64_t(target_dtype));
  return context.cache().get<ReorderEntry>(key.str(), [&] {
    dnnl::primitive_attr attr = dnn::piece_attr();
    if (accumulate) {
      dnnl::post_ops post_ops;
      post_ops.append_sum(1.f);
      attr.set_post_ops(post_ops);
    }
    const ReorderDescs descs = reorder_descs(layout, batch, to_plain, source_dtype, target_dtype);
    dnnl::reorder::primitive_desc pd(context.engine(), descs.source, context.engine(), descs.target, attr);
    return ReorderEntry{dnnl::reorder(pd), pd.scratchpad_desc()};
  });
}

// dst (=|+=) src between the strided head view (f32 or dtype) and the plain (B, H, T, Dh)
// layout, as oneDNN reorders (a sum post-op makes them add into dst: the backward
// accumulating), in pieces of the batch axis. Values go strided -> plain (split) or plain ->
// strided (merge) in `dtype`; gradients go back in f32.
void reorder(const HeadLayout& layout, bool to_plain, DType source_dtype, const void* source, DType target_dtype,
             void* target, bool accumulate) {
  const int64_t elements = numel(layout.dims);
  if (elements == 0) return;  // oneDNN rejects zero-sized reorders
  if (!accumulate && source_dtype == target_dtype && elements <= kSmallHeads) {
    copy_heads(layout, to_plain, dtype_size(source_dtype), source, target);
    return;
  }
  // Bytes from one batch row to the next on either side.
  const int64_t batch = layout.dims[0], plain_step = elements / batch, strided_step = layout.strides[0];
  const int64_t source_step = (to_plain ? strided_step : plain_step) * int64_t(dtype_size(source_dtype));
  const int64_t target_step = (to_plain ? plain_step : strided_step) * int64_t(dtype_size(target_dtype));
  dnn::run_in_pieces(
      batch, piece_count(batch, plain_step, kParallelPass),
      [&](int64_t rows) -> ReorderEntry& {
        return reorder_entry(layout, rows, to_plain, source_dtype, target_dtype, accumulate);
      },
      [&](const ReorderEntry& entry, int64_t, int64_t first, int64_t last) {
        const ReorderDescs descs = reorder_descs(layout, last - first, to_plain, source_dtype, target_dtype);
        dnn::execute(entry.primitive, entry.scratchpad,
                     {{DNNL_ARG_FROM, dnn::wrap(descs.source, static_cast<const char*>(source) + first * source_step)},
                      {DNNL_ARG_TO, dnn::wrap(descs.target, static_cast<char*>(target) + first * target_step)}});
      });
}

// The element `offset` of a tensor's values (f32 or bf16) or of its f32 gradient.
const void* at(const Tensor& t, int64_t offset) {
  return static_cast<const char*>(t.raw()) + offset * int64_t(dtype_size(t.dtype()));
}
void* at(Tensor& t, int64_t offset) { return static_cast<char*>(t.raw()) + offset * int64_t(dtype_size(t.dtype())); }

// Both ops move the same elements between the two layouts; `to_plain` says which way the
// forward goes (split_heads: strided -> plain, merge_heads: plain -> strided).
// Backward of a pure permutation y = P x: dx += P^T dy, the reverse reorder, accumulating
// (or overwriting an untouched dx that the heads cover whole).
Tensor permute_heads(Tape& tape, const Tensor& x, const HeadLayout& layout, const Shape& out_shape, bool to_plain,
                     DType dtype) {
  ATTN_CHECK(x.dtype() == DType::f32, "heads: only f32 tensors, got ", to_string(x.shape()), " in bf16");
  Tensor y = Tensor::empty(out_shape, dtype);
  // A split reads its columns from x at layout.first; a merge writes all of y.
  reorder(layout, to_plain, DType::f32, at(x, to_plain ? layout.first : 0), dtype, y.raw(), false);
  if (tape.needs_grad(x)) {
    y.set_requires_grad(true);
    tape.record([x = x.grad_only(), y = y.grad_only(), layout, to_plain] {
      if (!y.has_grad() || !x.requires_grad()) return;
      // An untouched gradient that these heads cover whole is overwritten, not added to
      // (Tensor::grad_to_write); a slice of x's columns always adds.
      const bool whole = layout.first == 0 && layout.dims[1] * layout.dims[3] == layout.strides[2];
      bool fresh = false;
      Tensor dx = whole ? x.grad_to_write(&fresh) : x.grad();
      Tensor dy = y.grad();
      reorder(layout, !to_plain, DType::f32, dy.raw(), DType::f32, at(dx, to_plain ? layout.first : 0), !fresh);
    });
  }
  return y;
}

}  // namespace

Tensor split_heads(Tape& tape, const Tensor& x, int64_t heads, DType dtype) {
  ATTN_CHECK(x.rank() == 3, "split_heads: input must be (B, T, D), got ", to_string(x.shape()));
  return split_heads(tape, x, heads, 0, x.dim(2), dtype);
}

Tensor split_heads(Tape& tape, const Tensor& x, int64_t heads, int64_t first, int64_t width, DType dtype) {
  ATTN_CHECK(x.rank() == 3, "split_heads: input must be (B, T, W), got ", to_string(x.shape()));
  ATTN_CHECK(first >= 0 && width > 0 && first + width <= x.dim(2), "split_heads: columns [", first, ", ", first + width,
             ") are not inside ", to_string(x.shape()));
  ATTN_CHECK(heads > 0 && width % heads == 0, "split_heads: width D=", width, " of ", to_string(x.shape()),
             " is not divisible by H=", heads, " heads");
  int64_t batch = x.dim(0), length = x.dim(1), head_width = width / heads;
  HeadLayout layout = head_layout(batch, heads, length, head_width, x.dim(2), first);
  return permute_heads(tape, x, layout, layout.dims, true, dtype);  // (B, H, T, Dh)
}

Tensor merge_heads(Tape& tape, const Tensor& x, DType dtype) {
  ATTN_CHECK(x.rank() == 4, "merge_heads: input must be (B, H, T, Dh), got ", to_string(x.shape()));
  int64_t batch = x.dim(0), heads = x.dim(1), length = x.dim(2), head_width = x.dim(3);
  HeadLayout layout = head_layout(batch, heads, length, head_width, heads * head_width, 0);
  return permute_heads(tape, x, layout, {batch, length, heads * head_width}, false, dtype);  // (B, T, H * Dh)
}

}  // namespace attn::ops
