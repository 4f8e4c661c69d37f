#include "ops/gemm.h"

#include <algorithm>
#include <cstring>
#include <optional>
#include <string>
#include <vector>

#include <oneapi/dnnl/dnnl.hpp>

#include "core/parallel.h"
#include "dnnl/context.h"
#include "dnnl/memory.h"
#include "dnnl/pieces.h"

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

// Columns [first, first + count) of a packed matrix that are, in place, the packed matrix of
// just those columns (the layout's outer blocks run along the columns): a product with few rows
// is cut into such parts.
struct PackedColumns {
  int64_t first = 0, count = 0;
  memory::desc layout;  // (K, count)
  size_t offset = 0;    // bytes into the whole matrix's values
};

// What pack_weight makes: W^T (K, N) in the matmul's blocked layout, in memory oneDNN owns.
struct OnednnPackedMatrix final : PackedMatrix {
  Shape dims;  // (K, N): the matmul's b
  DType dtype = DType::f32;
  memory values;
  std::vector<PackedColumns> column_parts;  // empty: not cut along the columns
};

struct PackedMatmulEntry {
  std::optional<dnnl::matmul> primitive;  // empty when only a reference kernel reads the layout
  memory::desc scratchpad;
};

// The layout is asked of a product of this many rows; oneDNN 2.6 picks the same one for every
// row count (1 to 1024 checked), so one packed copy serves all of decoding's batch shapes.
constexpr int64_t kLayoutQueryRows = 128;

// The blocked layout the matmul picks for a weight b (K, N).
memory::desc packed_layout(int64_t k, int64_t n, DType dtype) {
  auto query_a = dnn::plain_desc({kLayoutQueryRows, k}, dtype);
  auto any_b = memory::desc(dnn::to_dims({k, n}), dnn::to_dnnl(dtype), memory::format_tag::any);
  auto query_c = dnn::plain_desc({kLayoutQueryRows, n});
  return dnnl::matmul::primitive_desc(dnnl::matmul::desc(query_a, any_b, query_c), dnn::Context::get().engine())
      .weights_desc();
}

// W^T's columns [first, first + count) of the plain W (N, K), packed into `layout`.
memory pack_columns(const Tensor& weight, int64_t first, int64_t count, const memory::desc& layout) {
  const int64_t k = weight.dim(1);
  auto& context = dnn::Context::get();
  const char* rows = static_cast<const char*>(weight.raw()) + first * k * int64_t(dtype_size(weight.dtype()));
  memory plain = dnn::wrap(dnn::strided_desc({k, count}, {1, k}, weight.dtype()), rows);
  memory packed(layout, context.engine());
  dnnl::reorder(plain, packed).execute(context.stream(), plain, packed);
  return packed;
}

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

// How a product is cut: `pieces` ranges along `axis` of c (one piece: the whole product).
struct ProductCut {
  size_t axis = 0;     // of c
  int64_t extent = 0;  // c.dims[axis]
  int64_t pieces = 1;
};

// A product's operands, and the view of one piece of it.
struct Product {
  MatrixView a, b, c;
  GemmOptions options;

  // Entries [first, first + count) of c along the cut's axis: a batch axis (a cut too, and b
  // unless it broadcasts that axis), c's rows (a's rows too) or c's columns (b's and the bias').
  Product piece(const ProductCut& cut, int64_t first, int64_t count) const;
};

// Below this many multiply-adds (M N K) a second thread saves less than a piece's hand-out and
// its own oneDNN call cost.
constexpr int64_t kGemmParallelWork = int64_t(1) << 18;
// Pieces beyond one a thread carry at least this many: each piece is a oneDNN call of its own,
// whose fixed cost a smaller piece (a decoding step's) would not repay.
constexpr int64_t kGemmPieceWork = int64_t(1) << 22;
// Narrower pieces leave oneDNN's kernels short of whole register blocks.
constexpr int64_t kMinPieceRows = 16;
constexpr int64_t kMinPieceCols = 64;

Product Product::piece(const ProductCut& cut, int64_t first, int64_t count) const {
  Product part = *this;
  const size_t rank = c.dims.size();
  part.c = c.slice(cut.axis, first, count);
  if (cut.axis + 1 == rank) {
    part.b = b.slice(cut.axis, first, count);
    if (options.bias) part.options.bias = options.bias + first;
  } else {
    part.a = a.slice(cut.axis, first, count);
    if (cut.axis + 2 < rank && b.dims[cut.axis] != 1) part.b = b.slice(cut.axis, first, count);
  }
  return part;
}

// The axis that gives enough pieces, trying the batch axes, then the rows, then the columns;
// else the one that gives most, if that is at least one a thread.
ProductCut choose_cut(const Product& product) {
  const MatrixView& c = product.c;
  const int64_t work = numel(c.dims) * product.a.cols();
  const int64_t threads = in_parallel_piece() ? 1 : parallel_threads();
  const ProductCut whole{0, c.dims[0], 1};
  if (threads <= 1 || work <= kGemmParallelWork) return whole;
  const int64_t wanted = std::clamp<int64_t>(work / kGemmPieceWork, threads, 4 * threads);
  const size_t rank = c.dims.size();
  ProductCut best = whole;
  for (size_t axis = 0; axis < rank; ++axis) {
    const int64_t smallest = axis + 2 < rank ? 1 : axis + 2 == rank ? kMinPieceRows : kMinPieceCols;
    const int64_t most = c.dims[axis] / smallest;
    if (most >= wanted) return {axis, c.dims[axis], wanted};
    if (most >= threads && most > best.pieces) best = {axis, c.dims[axis], most};
  }
  return best;
}

MatmulEntry& matmul_entry(const Product& product) {
  const MatrixView &a = product.a, &b = product.b;
  dnn::CacheKey key("matmul");
  key.add(a.dims).add(a.strides).add(int64_t(a.dtype)).add(b.dims).add(b.strides).add(int64_t(b.dtype));
  add_output_and_options(key, product.c, product.options);
  return dnn::Context::get().cache().get<MatmulEntry>(key.str(), [&] {
    dnnl::matmul::primitive_desc pd =
        matmul_pd(dnn::strided_desc(a.dims, a.strides, a.dtype), dnn::strided_desc(b.dims, b.strides, b.dtype),
                  product.c, product.options);
    return MatmulEntry{dnnl::matmul(pd), pd.scratchpad_desc()};
  });
}

// The matmul of a (M, K) by a packed weight, or an entry without one when only a reference
// kernel reads the packed layout.
const PackedMatmulEntry& packed_matmul_entry(const MatrixView& a, const memory::desc& layout, DType dtype,
                                             const MatrixView& c, const GemmOptions& options) {
  dnn::CacheKey key("matmul_packed");
  key.add(a.dims).add(int64_t(a.dtype)).add(Shape{a.cols(), c.cols()}).add(int64_t(dtype));
  add_output_and_options(key, c, options);
  return dnn::Context::get().cache().get<PackedMatmulEntry>(key.str(), [&] {
    PackedMatmulEntry made;
    try {
      dnnl::matmul::primitive_desc pd = matmul_pd(dnn::plain_desc(a.dims, dtype), layout, c, options);
      if (std::string(pd.impl_info_str()).rfind("ref", 0) != 0) {
        made.primitive = dnnl::matmul(pd);
        made.scratchpad = pd.scratchpad_desc();
      }
    } catch (const dnnl::error&) {
      // no kernel at all for the packed layout: the caller multiplies the plain weight
    }
    return made;
  });
}

// Column parts of a packed weight: about four, each at least kMinPartColumns wide, when the
// layout keeps each part's columns together in place (checked byte for byte against each part
// packed on its own); none otherwise, or when the weight is too narrow to cut.
constexpr int64_t kMinPartColumns = 256;
std::vector<PackedColumns> column_parts_of(const OnednnPackedMatrix& packed, const Tensor& weight) {
  const int64_t k = packed.dims[0], n = packed.dims[1];
  const int64_t width = std::max(kMinPartColumns, (n / 4 + kMinPieceCols - 1) / kMinPieceCols * kMinPieceCols);
  if (width >= n) return {};
  std::vector<PackedColumns> parts;
  const auto* whole = static_cast<const char*>(packed.values.get_data_handle());
  size_t offset = 0;
  for (int64_t first = 0; first < n; first += width) {
    const int64_t count = std::min(width, n - first);
    const memory::desc layout = packed_layout(k, count, packed.dtype);
    const memory own = pack_columns(weight, first, count, layout);
    const size_t bytes = layout.get_size();
    if (offset + bytes > packed.values.get_desc().get_size() ||
        std::memcmp(whole + offset, own.get_data_handle(), bytes) != 0)
      return {};
    parts.push_back({first, count, layout, offset});
    offset += bytes;
  }
  return offset == packed.values.get_desc().get_size() ? parts : std::vector<PackedColumns>{};
}

// A part's product writes a dense (M, count) block: oneDNN's kernels for a blocked weight want a
// dense c (with c's row stride they fall back to a kernel that cannot read the packed layout).
MatrixView dense_block(float* data, int64_t rows, int64_t cols) {
  return MatrixView{data, {rows, cols}, {cols, 1}, DType::f32};
}

// c's columns of a part = the part's block (c += block when the product accumulates).
void store_block(const float* block, const MatrixView& c_part, bool accumulate) {
  const int64_t rows = c_part.rows(), cols = c_part.cols();
  auto* c_data = static_cast<float*>(const_cast<void*>(c_part.data));
  for (int64_t row = 0; row < rows; ++row) {
    float* target = c_data + row * c_part.strides[0];
    const float* source = block + row * cols;
    if (accumulate) {
      for (int64_t col = 0; col < cols; ++col) target[col] += source[col];
    } else {
      std::memcpy(target, source, size_t(cols) * sizeof(float));
    }
  }
}

// c (M, N) = a W^T with a packed W, one column part a piece; false when a part's product has no
// kernel that reads its layout.
bool multiply_column_parts(const MatrixView& a_in, const OnednnPackedMatrix& packed, const MatrixView& c,
                           const GemmOptions& options) {
  if (c.dtype != DType::f32) return false;
  const std::vector<PackedColumns>& parts = packed.column_parts;
  const int64_t rows = c.rows();
  GemmOptions block_options = options;  // the block is written whole; store_block accumulates
  block_options.accumulate = false;
  std::vector<const PackedMatmulEntry*> entries;
  for (const PackedColumns& part : parts) {
    entries.push_back(
        &packed_matmul_entry(a_in, part.layout, packed.dtype, dense_block(nullptr, rows, part.count), block_options));
    if (!entries.back()->primitive) return false;
  }
  count_flops(a_in, c);
  Tensor a_bf16;
  const MatrixView a = operand_for(a_in, packed.dtype == DType::bf16, a_bf16);
  auto* whole = static_cast<char*>(packed.values.get_data_handle());
  auto run = [&](int64_t index) {
    const PackedColumns& part = parts[size_t(index)];
    GemmOptions part_options = block_options;
    if (options.bias) part_options.bias = options.bias + part.first;
    thread_local std::vector<float> block;
    block.resize(size_t(rows * part.count));
    const PackedMatmulEntry& entry = *entries[size_t(index)];
    execute_matmul(*entry.primitive, entry.scratchpad, a, dnn::wrap(part.layout, whole + part.offset),
                   dense_block(block.data(), rows, part.count), part_options);
    store_block(block.data(), c.slice(1, part.first, part.count), options.accumulate);
  };
  run_pieces(int64_t(parts.size()), PieceFunction(run));
  return true;
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
  ATTN_CHECK(dims.size() == 2, "matrix view: rows of a rank-", dims.size(), " view");
  return slice(0, first, count);
}

MatrixView MatrixView::slice(size_t axis, int64_t first, int64_t count) const {
  ATTN_CHECK(axis < dims.size() && first >= 0 && count >= 0 && first + count <= dims[axis], "matrix view: [", first,
             ", ", first + count, ") along axis ", axis, " of ", to_string(dims));
  MatrixView view = *this;
  view.data = static_cast<const char*>(data) + first * strides[axis] * int64_t(dtype_size(dtype));
  view.dims[axis] = count;
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
  bool use_bf16 = options.precision == Precision::bf16 || a_in.dtype == DType::bf16 || b_in.dtype == DType::bf16;
  Tensor a_bf16, b_bf16;
  const Product whole{operand_for(a_in, use_bf16, a_bf16), operand_for(b_in, use_bf16, b_bf16), c, options};
  const ProductCut cut = choose_cut(whole);
  // A piece's primitive depends on its length only (the views' strides are the whole's).
  auto entry = [&](int64_t count) -> MatmulEntry& { return matmul_entry(whole.piece(cut, 0, count)); };
  dnn::run_in_pieces(
      cut.extent, cut.pieces, entry, [&](const MatmulEntry& made, int64_t /*piece*/, int64_t first, int64_t last) {
        const Product part = whole.piece(cut, first, last - first);
        execute_matmul(made.primitive, made.scratchpad, part.a,
                       dnn::wrap(dnn::strided_desc(part.b.dims, part.b.strides, part.b.dtype), part.b.data), part.c,
                       part.options);
      });
}

std::shared_ptr<const PackedMatrix> pack_weight(const Tensor& weight) {
  ATTN_CHECK(weight.rank() == 2 &&
                 (weight.dtype() == DType::f32 || weight.dtype() == DType::bf16 || weight.dtype() == DType::s8),
             "pack_weight: needs an f32, bf16 or s8 matrix, not ", dtype_name(weight.dtype()), " ",
             to_string(weight.shape()));
  auto packed = std::make_shared<OnednnPackedMatrix>();
  const int64_t k = weight.dim(1), n = weight.dim(0);  // W^T is (K, N)
  packed->dims = {k, n};
  packed->dtype = weight.dtype();
  packed->values = pack_columns(weight, 0, n, packed_layout(k, n, weight.dtype()));
  packed->column_parts = column_parts_of(*packed, weight);
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
  const Product whole{a_in, MatrixView{nullptr, packed.dims, {}, packed.dtype}, c, options};
  ProductCut cut = choose_cut(whole);
  if (cut.axis == 1 && !packed.column_parts.empty()) return multiply_column_parts(a_in, packed, c, options);
  if (cut.axis != 0) cut = ProductCut{0, c.rows(), 1};  // columns, but the layout has no parts
  auto entry = [&](int64_t rows) -> const PackedMatmulEntry& {
    return packed_matmul_entry(a_in.row_range(0, rows), packed.values.get_desc(), packed.dtype, c.row_range(0, rows),
                               options);
  };
  // Pieces come in two lengths at most (dnnl/pieces.h); each needs a kernel that reads the layout.
  const int64_t shorter = cut.extent / cut.pieces;
  if (!entry(shorter).primitive || (cut.extent % cut.pieces != 0 && !entry(shorter + 1).primitive)) return false;
  count_flops(a_in, c);
  Tensor a_bf16;
  const MatrixView a = operand_for(a_in, packed.dtype == DType::bf16, a_bf16);
  dnn::run_in_pieces(cut.extent, cut.pieces, entry,
                     [&](const PackedMatmulEntry& made, int64_t /*piece*/, int64_t first, int64_t last) {
                       execute_matmul(*made.primitive, made.scratchpad, a.row_range(first, last - first), packed.values,
                                      c.row_range(first, last - first), options);
                     });
  return true;
}

Tensor plain_weight(const Tensor& values, const PackedMatrix* packed) {
  if (values.has_values()) return values;
  ATTN_CHECK(packed, "a weight ", to_string(values.shape()), " without values has no packed copy to unpack");
  const auto& source = dynamic_cast<const OnednnPackedMatrix&>(*packed);
  const int64_t k = source.dims[0], n = source.dims[1];
  Tensor unpacked = Tensor::empty({n, k}, source.dtype);  // W (N, K) = the plain b^T
  auto& context = dnn::Context::get();
  memory plain = dnn::wrap(dnn::strided_desc({k, n}, {1, k}, source.dtype), unpacked.raw());
  memory packed_values = source.values;  // a handle: execute() takes non-const ones
  dnnl::reorder(packed_values, plain).execute(context.stream(), packed_values, plain);
  return unpacked;
}

namespace {

// The offset, in elements, of b[k][n] in a blocked layout: the inner blocks, innermost last,
// take the index's remainders, and the outer strides what is left of it.
int64_t blocked_offset(const dnnl_memory_desc_t& desc, int64_t k, int64_t n) {
  const dnnl_blocking_desc_t& blocking = desc.format_desc.blocking;
  int64_t index[2] = {k, n};
  int64_t offset = desc.offset0, inner_stride = 1;
  for (int block = blocking.inner_nblks - 1; block >= 0; --block) {
    const int64_t axis = blocking.inner_idxs[block], size = blocking.inner_blks[block];
    offset += index[axis] % size * inner_stride;
    index[axis] /= size;
    inner_stride *= size;
  }
  return offset + index[0] * blocking.strides[0] + index[1] * blocking.strides[1];
}

}  // namespace

void packed_rows(const PackedMatrix& packed, const std::vector<int32_t>& ids, float* out, const float* row_scales) {
  const auto& source = dynamic_cast<const OnednnPackedMatrix&>(packed);
  const dnnl_memory_desc_t& desc = source.values.get_desc().data;
  ATTN_CHECK(desc.format_kind == dnnl_blocked, "packed_rows: needs a weight packed in a blocked layout");
  ATTN_CHECK(source.dtype != DType::s8 || row_scales, "packed_rows: an s8 weight needs its row scales");
  // A reorder for a kernel without VNNI may store s8 weights scaled down (oneDNN's scale_adjust).
  const float adjust = (desc.extra.flags & dnnl_memory_extra_flag_scale_adjust) ? desc.extra.scale_adjust : 1.f;
  const int64_t k = source.dims[0], n = source.dims[1];
  // A blocked offset is a sum of one part per axis: b[k][n] = k's part + n's part.
  std::vector<int64_t> k_parts(static_cast<size_t>(k));  // (K), offset0 included
  for (int64_t column = 0; column < k; ++column) k_parts[size_t(column)] = blocked_offset(desc, column, 0);
  const int64_t first_row = blocked_offset(desc, 0, 0);
  const auto copy_rows = [&](const auto* values, auto to_f32) {
    for (size_t row = 0; row < ids.size(); ++row) {
      const int32_t id = ids[row];
      ATTN_CHECK(id >= 0 && id < n, "packed_rows: row ", id, " of a weight with ", n, " rows");
      const auto* row_values = values + (blocked_offset(desc, 0, id) - first_row);
      float* target = out + int64_t(row) * k;
      for (int64_t column = 0; column < k; ++column) target[column] = to_f32(row_values[k_parts[size_t(column)]], id);
    }
  };
  const void* values = source.values.get_data_handle();
  switch (source.dtype) {
    case DType::f32:
      copy_rows(static_cast<const float*>(values), [](float value, int32_t) { return value; });
      break;
    case DType::bf16:
      copy_rows(static_cast<const uint16_t*>(values), [](uint16_t value, int32_t) { return bf16_to_f32(value); });
      break;
    case DType::s8:
      copy_rows(static_cast<const int8_t*>(values),
                [&](int8_t value, int32_t id) { return float(value) / adjust * row_scales[id]; });
      break;
    default:
      ATTN_CHECK(false, "packed_rows: a weight of ", dtype_name(source.dtype), " has no rows to read");
  }
}

}  // namespace attn::ops
