#include "ops/gemm.h"

#include <oneapi/dnnl/dnnl.hpp>

#include "dnnl/context.h"
#include "dnnl/memory.h"

namespace attn::ops {

namespace {

using dnnl::memory;

struct MatmulEntry {
  dnnl::matmul::primitive_desc pd;
  dnnl::matmul primitive;
};

struct ReorderEntry {
  dnnl::reorder primitive;
};

void check_operands(const MatrixView& a, const MatrixView& b, const MatrixView& c) {
  size_t rank = a.dims.size();
  ATTN_CHECK(rank >= 2 && b.dims.size() == rank && c.dims.size() == rank, "gemm: ranks differ: a ", to_string(a.dims),
             ", b ", to_string(b.dims), ", c ", to_string(c.dims));
  ATTN_CHECK(a.cols() == b.rows() && c.rows() == a.rows() && c.cols() == b.cols(), "gemm: shapes do not chain: a ",
             to_string(a.dims), " x b ", to_string(b.dims), " -> c ", to_string(c.dims));
  for (size_t axis = 0; axis + 2 < rank; ++axis) {
    ATTN_CHECK(a.dims[axis] == c.dims[axis] && (b.dims[axis] == c.dims[axis] || b.dims[axis] == 1),
               "gemm: batch dims differ: a ", to_string(a.dims), ", b ", to_string(b.dims));
  }
}

MatrixView plain_view(const Tensor& tensor) { return MatrixView::of(tensor); }

uint64_t flop_counter = 0;

}  // namespace

MatrixView MatrixView::of(const Tensor& tensor) {
  ATTN_CHECK(tensor.rank() >= 2, "matrix view of a rank-", tensor.rank(), " tensor");
  return MatrixView{tensor.raw(), tensor.shape(), row_major_strides(tensor.shape()), tensor.dtype()};
}

MatrixView MatrixView::grad_of(const Tensor& tensor) { return of(tensor.grad()); }

MatrixView MatrixView::transposed() const {
  MatrixView view = *this;
  size_t rank = dims.size();
  std::swap(view.dims[rank - 1], view.dims[rank - 2]);
  std::swap(view.strides[rank - 1], view.strides[rank - 2]);
  return view;
}

Tensor bf16_copy(const MatrixView& view) {
  ATTN_CHECK(view.dtype == DType::f32, "bf16_copy: the operand is not f32");
  Tensor converted = Tensor::empty(view.dims, DType::bf16);
  auto source_desc = dnn::strided_desc(view.dims, view.strides, DType::f32);
  auto target_desc = dnn::plain_desc(view.dims, DType::bf16);
  auto& context = dnn::Context::get();
  dnn::CacheKey key("reorder_bf16");
  key.add(view.dims).add(view.strides);
  auto& entry = context.cache().get<ReorderEntry>(key.str(), [&] {
    return ReorderEntry{
        dnnl::reorder(dnnl::reorder::primitive_desc(context.engine(), source_desc, context.engine(), target_desc))};
  });
  dnnl::memory source = dnn::wrap(source_desc, view.data);
  dnnl::memory target = dnn::wrap(target_desc, converted.raw());
  entry.primitive.execute(context.stream(), source, target);
  return converted;
}

Tensor matmul_operand(const Tensor& tensor) {
  bool bf16 = dnn::Context::get().matmul_precision() == dnn::MatmulPrecision::bf16;
  return bf16 && tensor.dtype() == DType::f32 ? bf16_copy(MatrixView::of(tensor)) : tensor;
}

bool bf16_gemm_supported() {
  static const bool supported = [] {
    try {
      auto bf16 = dnn::plain_desc({16, 16}, DType::bf16);
      dnnl::matmul::primitive_desc pd(dnnl::matmul::desc(bf16, bf16, dnn::plain_desc({16, 16})),
                                      dnn::Context::get().engine());
      return true;
    } catch (const dnnl::error&) {
      return false;
    }
  }();
  return supported;
}

uint64_t gemm_flops() { return flop_counter; }
void reset_gemm_flops() { flop_counter = 0; }

void gemm(const MatrixView& a_in, const MatrixView& b_in, const MatrixView& c, const GemmOptions& options) {
  check_operands(a_in, b_in, c);
  flop_counter += 2ull * uint64_t(numel(c.dims)) * uint64_t(a_in.cols());
  auto& context = dnn::Context::get();
  bool use_bf16 = context.matmul_precision() == dnn::MatmulPrecision::bf16 || a_in.dtype == DType::bf16 ||
                  b_in.dtype == DType::bf16;
  Tensor a_bf16 = use_bf16 && a_in.dtype == DType::f32 ? bf16_copy(a_in) : Tensor();
  Tensor b_bf16 = use_bf16 && b_in.dtype == DType::f32 ? bf16_copy(b_in) : Tensor();
  MatrixView a = a_bf16.defined() ? plain_view(a_bf16) : a_in;
  MatrixView b = b_bf16.defined() ? plain_view(b_bf16) : b_in;

  auto a_desc = dnn::strided_desc(a.dims, a.strides, a.dtype);
  auto b_desc = dnn::strided_desc(b.dims, b.strides, b.dtype);
  auto c_desc = dnn::strided_desc(c.dims, c.strides, c.dtype);
  Shape bias_dims(c.dims.size(), 1);
  bias_dims.back() = c.cols();
  auto bias_desc = dnn::plain_desc(bias_dims);

  dnn::CacheKey key("matmul");
  key.add(a.dims).add(a.strides).add(int64_t(a.dtype)).add(b.dims).add(b.strides).add(int64_t(b.dtype));
  key.add(c.dims)
      .add(c.strides)
      .add(options.alpha)
      .add(int64_t(options.accumulate))
      .add(int64_t(options.bias != nullptr));
  auto& entry = context.cache().get<MatmulEntry>(key.str(), [&] {
    dnnl::primitive_attr attr;
    if (options.alpha != 1.f) attr.set_output_scales(0, {options.alpha});
    if (options.accumulate) {
      dnnl::post_ops post_ops;
      post_ops.append_sum(1.f);
      attr.set_post_ops(post_ops);
    }
    auto desc = options.bias ? dnnl::matmul::desc(a_desc, b_desc, bias_desc, c_desc)
                             : dnnl::matmul::desc(a_desc, b_desc, c_desc);
    dnnl::matmul::primitive_desc pd(desc, attr, context.engine());
    return MatmulEntry{pd, dnnl::matmul(pd)};
  });

  std::unordered_map<int, memory> args{{DNNL_ARG_SRC, dnn::wrap(a_desc, a.data)},
                                       {DNNL_ARG_WEIGHTS, dnn::wrap(b_desc, b.data)},
                                       {DNNL_ARG_DST, dnn::wrap(c_desc, c.data)}};
  if (options.bias) args.emplace(DNNL_ARG_BIAS, dnn::wrap(bias_desc, options.bias));
  entry.primitive.execute(context.stream(), args);
}

}  // namespace attn::ops
