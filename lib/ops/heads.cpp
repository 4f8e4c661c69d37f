#include "ops/heads.h"

#include <oneapi/dnnl/dnnl.hpp>

#include "dnnl/context.h"
#include "dnnl/memory.h"

namespace attn::ops {

namespace {

struct ReorderEntry {
  dnnl::reorder primitive;
};

// A (B, T, H * Dh) buffer seen as (B, H, T, Dh) through strides: no data moves.
struct HeadLayout {
  Shape dims;     // (B, H, T, Dh)
  Shape strides;  // (T * H * Dh, Dh, H * Dh, 1)
};

HeadLayout head_layout(int64_t batch, int64_t heads, int64_t length, int64_t head_width) {
  int64_t width = heads * head_width;
  return {{batch, heads, length, head_width}, {length * width, head_width, width, 1}};
}

// dst (=|+=) src between the strided head view and the plain (B, H, T, Dh) layout, as one
// oneDNN reorder (a sum post-op makes it add into dst, which is how the backward accumulates).
void reorder(const HeadLayout& layout, bool to_plain, const void* source, void* target, bool accumulate) {
  if (numel(layout.dims) == 0) return;  // oneDNN rejects zero-sized reorders
  auto strided = dnn::strided_desc(layout.dims, layout.strides);
  auto plain = dnn::plain_desc(layout.dims);
  auto& source_desc = to_plain ? strided : plain;
  auto& target_desc = to_plain ? plain : strided;
  auto& context = dnn::Context::get();
  dnn::CacheKey key("heads_reorder");
  key.add(layout.dims).add(int64_t(to_plain)).add(int64_t(accumulate));
  auto& entry = context.cache().get<ReorderEntry>(key.str(), [&] {
    dnnl::primitive_attr attr;
    if (accumulate) {
      dnnl::post_ops post_ops;
      post_ops.append_sum(1.f);
      attr.set_post_ops(post_ops);
    }
    return ReorderEntry{dnnl::reorder(
        dnnl::reorder::primitive_desc(context.engine(), source_desc, context.engine(), target_desc, attr))};
  });
  dnnl::memory source_memory = dnn::wrap(source_desc, source);
  dnnl::memory target_memory = dnn::wrap(target_desc, target);
  entry.primitive.execute(context.stream(), source_memory, target_memory);
}

// Both ops move the same elements between the two layouts; `to_plain` says which way the
// forward goes (split_heads: strided -> plain, merge_heads: plain -> strided).
// Backward of a pure permutation y = P x: dx += P^T dy, the reverse reorder, accumulating
// (or overwriting an untouched dx).
Tensor permute_heads(Tape& tape, const Tensor& x, const HeadLayout& layout, const Shape& out_shape, bool to_plain) {
  ATTN_CHECK(x.dtype() == DType::f32, "heads: only f32 tensors, got ", to_string(x.shape()), " in bf16");
  Tensor y = Tensor::empty(out_shape);
  reorder(layout, to_plain, x.raw(), y.raw(), false);
  if (tape.needs_grad(x)) {
    y.set_requires_grad(true);
    tape.record([x = x.grad_only(), y = y.grad_only(), layout, to_plain] {
      if (!y.has_grad() || !x.requires_grad()) return;
      bool fresh = false;  // an untouched gradient is overwritten, not added to (Tensor::grad_to_write)
      Tensor dx = x.grad_to_write(&fresh);
      reorder(layout, !to_plain, y.grad().raw(), dx.raw(), !fresh);
    });
  }
  return y;
}

}  // namespace

Tensor split_heads(Tape& tape, const Tensor& x, int64_t heads) {
  ATTN_CHECK(x.rank() == 3, "split_heads: input must be (B, T, D), got ", to_string(x.shape()));
  ATTN_CHECK(heads > 0 && x.dim(2) % heads == 0, "split_heads: width D=", x.dim(2), " of ", to_string(x.shape()),
             " is not divisible by H=", heads, " heads");
  int64_t batch = x.dim(0), length = x.dim(1), head_width = x.dim(2) / heads;
  HeadLayout layout = head_layout(batch, heads, length, head_width);
  return permute_heads(tape, x, layout, layout.dims, true);  // (B, H, T, Dh)
}

Tensor merge_heads(Tape& tape, const Tensor& x) {
  ATTN_CHECK(x.rank() == 4, "merge_heads: input must be (B, H, T, Dh), got ", to_string(x.shape()));
  int64_t batch = x.dim(0), heads = x.dim(1), length = x.dim(2), head_width = x.dim(3);
  HeadLayout layout = head_layout(batch, heads, length, head_width);
  return permute_heads(tape, x, layout, {batch, length, heads * head_width}, false);  // (B, T, H * Dh)
}

}  // namespace attn::ops
