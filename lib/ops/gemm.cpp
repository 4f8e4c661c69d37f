#include "ops/gemm.h"

#include <optional>
#include <string>

#include <oneapi/dnnl/dnnl.hpp>

#include "dnnl/context.h"
#include "dnnl/memory.h"

namespace attn::ops {

namespace {

using dnnl::memory;

struct MatmulEntry {
  dnnl::matmul primitive;
  memory::desc scratchpad;
};

struct ReorderEntry {
  dnnl::reorder primitive;
};

// What pack_weight makes: W^T (K, N) in the matmul's blocked layout, in memory oneDNN owns.
struct OnednnPackedMatrix final : PackedMatrix {
  Shape dims;  // (K, N): the matmul's b
  DType dtype = DType::f32;
  memory values;
};

struct PackedMatmulEntry {
  std::optional<dnnl::matmul> primitive;  // empty when only a reference kernel reads the layout
  memory::desc scratchpad;
};

// The layout is asked of a product of this many rows; oneDNN 2.6 picks the same one for every
// row count (1 to 1024 checked), so one packed copy serves all of decoding's batch shapes.
constexpr int64_t kLayoutQueryRows = 128;

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

dnnl::primitive_attr matmul_attr(const GemmOptions& options) {
  ATTN_CHECK(!(options.accumulate && options.relu), "gemm: a ReLU post-op cannot follow accumulation");
  dnnl::primitive_attr attr;
  attr.set_scratchpad_mode(dnnl::scratchpad_mode::user);  // the context's, not one per cached primitive
  if (options.alpha != 1.f) attr.set_output_scales(0, {options.alpha});
  dnnl::post_ops post_ops;
  if (options.accumulate) post_ops.append_sum(1.f);
  if (options.relu) post_ops.append_eltwise(1.f, dnnl::algorithm::eltwise_relu, 0.f, 0.f);
  if (options.accumulate || options.relu) attr.set_post_ops(post_ops);
  return attr;
}

// (1, ..., 1, N): the bias, broadcast over every row of c (..., M, N).
memory::desc bias_desc_of(const MatrixView& c) {
  Shape bias_dims(c.dims.size(), 1);
  bias_dims.back() = c.cols();
  return dnn::plain_desc(bias_dims);
}

dnnl::matmul::primitive_desc matmul_pd(const memory::desc& a, const memory::desc& b, const MatrixView& c,
                                       const GemmOptions& options) {
  auto c_desc = dnn::strided_desc(c.dims, c.strides, c.dtype);
  auto desc = options.bias ? dnnl::matmul::desc(a, b, bias_desc_of(c), c_desc) : dnnl::matmul::desc(a, b, c_desc);
  return dnnl::matmul::primitive_desc(desc, matmul_attr(options), dnn::Context::get().engine());
}

// The key part every matmul shares: c's shape and the options.
void add_output_and_options(dnn::CacheKey& key, const MatrixView& c, const GemmOptions& options) {
  key.add(c.dims).add(c.strides).add(options.alpha).add(int64_t(options.accumulate));
  key.add(int64_t(options.bias != nullptr)).add(int64_t(options.relu));
}

void execute_matmul(const dnnl::matmul& primitive, const memory::desc& scratchpad, const MatrixView& a, const memory& b,
                    const MatrixView& c, const GemmOptions& options) {
  auto& context = dnn::Context::get();
  std::unordered_map<int, memory> args{
      {DNNL_ARG_SRC, dnn::wrap(dnn::strided_desc(a.dims, a.strides, a.dtype), a.data)},
      {DNNL_ARG_WEIGHTS, b},
      {DNNL_ARG_DST, dnn::wrap(dnn::strided_desc(c.dims, c.strides, c.dtype), c.data)}};
  if (scratchpad.get_size() > 0) args.emplace(DNNL_ARG_SCRATCHPAD, context.scratchpad(scratchpad));
  if (options.bias) args.emplace(DNNL_ARG_BIAS, dnn::wrap(bias_desc_of(c), options.bias));
  primitive.execute(context.stream(), args);
}

void count_flops(const MatrixView& a, const MatrixView& c) {
  flop_counter += 2ull * uint64_t(numel(c.dims)) * uint64_t(a.cols());
}

// An operand as the matmul reads it: when the product runs in bf16, an f32 operand is
// converted into `converted` (which owns the copy) and its plain view returned.
MatrixView operand_for(const MatrixView& a, bool bf16, Tensor& converted) {
  if (!bf16 || a.dtype != DType::f32) return a;
  converted = bf16_copy(a);
  return plain_view(converted);
}

}  // namespace

MatrixView MatrixView::of(const Tensor& tensor) {
  ATTN_CHECK(tensor.rank() >= 2, "matrix view of a rank-", tensor.rank(), " tensor");
  return MatrixView{tensor.raw(), tensor.shape(), row_major_strides(tensor.shape()), tensor.dtype()};
}

MatrixView MatrixView::grad_of(const Tensor& tensor) { return of(tensor.grad()); }

GradientTarget gradient_target(const Tensor& tensor, float alpha) {
  bool fresh = false;
  Tensor grad = tensor.grad_to_write(&fresh);
  return {MatrixView::of(grad), fresh ? GemmOptions::overwrite(alpha) : GemmOptions::accumulating(alpha)};
}

MatrixView MatrixView::row_range(int64_t first, int64_t count) const {
  ATTN_CHECK(dims.size() == 2 && first >= 0 && count >= 0 && first + count <= dims[0], "matrix view: rows [", first,
             ", ", first + count, ") of ", to_string(dims));
  MatrixView view = *this;
  view.data = static_cast<const char*>(data) + first * strides[0] * int64_t(dtype_size(dtype));
  view.dims[0] = count;
  return view;
}

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
  if (view.strides == row_major_strides(view.dims)) {
    convert_to_bf16(static_cast<const float*>(view.data), converted.data_bf16(), converted.numel());
    return converted;
  }
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

Tensor matmul_operand(const Tensor& tensor, Precision precision) {
  return precision == Precision::bf16 && tensor.dtype() == DType::f32 ? bf16_copy(MatrixView::of(tensor)) : tensor;
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
  if (!options.recomputed) count_flops(a_in, c);
  auto& context = dnn::Context::get();
  bool use_bf16 = options.precision == Precision::bf16 || a_in.dtype == DType::bf16 || b_in.dtype == DType::bf16;
  Tensor a_bf16, b_bf16;
  MatrixView a = operand_for(a_in, use_bf16, a_bf16);
  MatrixView b = operand_for(b_in, use_bf16, b_bf16);
  auto a_desc = dnn::strided_desc(a.dims, a.strides, a.dtype);
  auto b_desc = dnn::strided_desc(b.dims, b.strides, b.dtype);

  dnn::CacheKey key("matmul");
  key.add(a.dims).add(a.strides).add(int64_t(a.dtype)).add(b.dims).add(b.strides).add(int64_t(b.dtype));
  add_output_and_options(key, c, options);
  auto& entry = context.cache().get<MatmulEntry>(key.str(), [&] {
    dnnl::matmul::primitive_desc pd = matmul_pd(a_desc, b_desc, c, options);
    return MatmulEntry{dnnl::matmul(pd), pd.scratchpad_desc()};
  });
  execute_matmul(entry.primitive, entry.scratchpad, a, dnn::wrap(b_desc, b.data), c, options);
}

std::shared_ptr<const PackedMatrix> pack_weight(const Tensor& weight) {
  ATTN_CHECK(weight.rank() == 2 &&
                 (weight.dtype() == DType::f32 || weight.dtype() == DType::bf16 || weight.dtype() == DType::s8),
             "pack_weight: needs an f32, bf16 or s8 matrix, not ", dtype_name(weight.dtype()), " ",
             to_string(weight.shape()));
  auto packed = std::make_shared<OnednnPackedMatrix>();
  const int64_t rows = weight.dim(1), cols = weight.dim(0);  // W^T is (K, N)
  packed->dims = {rows, cols};
  packed->dtype = weight.dtype();
  auto& context = dnn::Context::get();
  auto query_a = dnn::plain_desc({kLayoutQueryRows, rows}, weight.dtype());
  auto any_b = memory::desc(dnn::to_dims(packed->dims), dnn::to_dnnl(weight.dtype()), memory::format_tag::any);
  auto query_c = dnn::plain_desc({kLayoutQueryRows, cols});
  dnnl::matmul::primitive_desc query(dnnl::matmul::desc(query_a, any_b, query_c), context.engine());
  packed->values = memory(query.weights_desc(), context.engine());
  memory plain = dnn::wrap(dnn::strided_desc(packed->dims, {1, rows}, weight.dtype()), weight.raw());
  dnnl::reorder(plain, packed->values).execute(context.stream(), plain, packed->values);
  return packed;
}

bool gemm_packed(const MatrixView& a_in, const PackedMatrix& weight, const MatrixView& c, const GemmOptions& options) {
  const auto& packed = dynamic_cast<const OnednnPackedMatrix&>(weight);
  ATTN_CHECK(a_in.dims.size() == 2 && c.dims.size() == 2 && a_in.cols() == packed.dims[0] && c.rows() == a_in.rows() &&
                 c.cols() == packed.dims[1],
             "gemm: shapes do not chain: a ", to_string(a_in.dims), " x packed b ", to_string(packed.dims), " -> c ",
             to_string(c.dims));
  const bool a_fits = a_in.dtype == packed.dtype || (a_in.dtype == DType::f32 && packed.dtype != DType::s8);
  ATTN_CHECK(a_in.strides == row_major_strides(a_in.dims) && a_fits,
             "gemm_packed: a must be plain row-major, of the packed weight's dtype (or f32 for a float weight)");
  dnn::CacheKey key("matmul_packed");
  key.add(a_in.dims).add(int64_t(a_in.dtype)).add(packed.dims).add(int64_t(packed.dtype));
  add_output_and_options(key, c, options);
  auto& entry = dnn::Context::get().cache().get<PackedMatmulEntry>(key.str(), [&] {
    PackedMatmulEntry made;
    try {
      dnnl::matmul::primitive_desc pd =
          matmul_pd(dnn::plain_desc(a_in.dims, packed.dtype), packed.values.get_desc(), c, options);
      if (std::string(pd.impl_info_str()).rfind("ref", 0) != 0) {
        made.primitive = dnnl::matmul(pd);
        made.scratchpad = pd.scratchpad_desc();
      }
    } catch (const dnnl::error&) {
      // no kernel at all for the packed layout: the caller multiplies the plain weight
    }
    return made;
  });
  if (!entry.primitive) return false;
  count_flops(a_in, c);
  Tensor a_bf16;
  MatrixView a = operand_for(a_in, packed.dtype == DType::bf16, a_bf16);
  execute_matmul(*entry.primitive, entry.scratchpad, a, packed.values, c, options);
  return true;
}

}  // namespace attn::ops
