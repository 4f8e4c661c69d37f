#pragma once
// gemm: the one matrix-product kernel every op uses, on oneDNN's matmul primitive.
// Operands are strided views, so a transpose (or a head split) is a stride swap, never a copy.
//
// Shapes: a (..., M, K), b (..., K, N), c (..., M, N); leading batch dims of a and b are equal
// or 1 (broadcast, e.g. one weight matrix for a batch).
#include <memory>

#include "core/matmul_weight.h"
#include "core/tensor.h"

namespace attn::ops {

struct MatrixView {
  const void* data = nullptr;
  Shape dims;     // (..., rows, cols)
  Shape strides;  // in elements
  DType dtype = DType::f32;

  static MatrixView of(const Tensor& tensor);       // plain row-major
  static MatrixView grad_of(const Tensor& tensor);  // the tensor's gradient, plain row-major
  MatrixView transposed() const;                    // swaps the last two dims and strides
  MatrixView transposed_if(bool flag) const { return flag ? transposed() : *this; }
  // Rows [first, first + count) of a matrix (rank 2): the same strides, the data moved on.
  MatrixView row_range(int64_t first, int64_t count) const;
  // Entries [first, first + count) along `axis`, any rank: the same strides, the data moved on.
  MatrixView slice(size_t axis, int64_t first, int64_t count) const;
  int64_t rows() const { return dims[dims.size() - 2]; }
  int64_t cols() const { return dims.back(); }
};

struct GemmOptions {
  float alpha = 1.f;            // c = alpha * a b
  bool accumulate = false;      // c += alpha * a b (a sum post-op: how gradients add up)
  const float* bias = nullptr;  // (N), added to every row
  bool relu = false;            // c = max(c, 0) after the bias (an eltwise post-op; not with accumulate)
  // bf16: f32 operands are converted and multiplied in bf16 with f32 accumulation (bf16
  // training); f32 multiplies f32 operands as they are. A bf16 operand is always multiplied in bf16.
  Precision precision = Precision::f32;
  // A product the forward already made and the backward makes again (ops::linear_cross_entropy's
  // chunks of logits): not counted by gemm_flops, which counts the model's FLOPs.
  bool recomputed = false;

  // c = alpha * a b (+ bias)
  static GemmOptions overwrite(float alpha = 1.f, const float* bias = nullptr, bool relu = false) {
    return {alpha, false, bias, relu};
  }
  // c += alpha * a b
  static GemmOptions accumulating(float alpha = 1.f) { return {alpha, true, nullptr, false}; }
};

// Where a backward product puts d(tensor): the gradient as a plain view, and options that add
// alpha * a b to it, or overwrite it with that when nothing has written any of it yet
// (Tensor::grad_to_write: no memset, no sum post-op reading zeros).
struct GradientTarget {
  MatrixView view;
  GemmOptions options;
};
GradientTarget gradient_target(const Tensor& tensor, float alpha = 1.f);

// c (+)= alpha * a b (+ bias). Runs in bf16 (AMX or AVX-512 BF16) when options.precision is bf16
// or an operand is bf16 (the other is converted: bf16 decoding's weights). A large product is cut
// into pieces (along a batch axis, c's rows, or c's columns) that attn's threads take as they
// free up, each a single-threaded oneDNN matmul (core/parallel.h says why).
void gemm(const MatrixView& a, const MatrixView& b, const MatrixView& c, const GemmOptions& options = {});

// A weight W (N, K), f32, bf16 or s8, packed as the b = W^T (K, N) of c = a W^T in the blocked
// layout oneDNN's matmul picks on this CPU (the same for every row count of a, checked on
// AVX-512: 16 x 64 blocks). With the plain transposed W, every product first copies W into that
// layout, a large share of a product at decoding's row counts (docs/performance.md, "Packed
// weights"); decoding's weights never change, so it packs them once (ops::pack_matmul_weights).
std::shared_ptr<const PackedMatrix> pack_weight(const Tensor& weight);
// c (M, N) = a (M, K) W^T (+ options.bias) with a packed W; a is converted to bf16 first when W
// is bf16, and must be s8 when W is (c is then the exact s32 sum, as f32). Returns false, and
// does nothing, when oneDNN would multiply these rows with the packed layout on a reference
// kernel only (the caller multiplies the plain W then).
bool gemm_packed(const MatrixView& a, const PackedMatrix& weight, const MatrixView& c, const GemmOptions& options);
// The plain (N, K) values of a weight: `values` itself, or, when decoding dropped them
// (ParameterStore::prepare_for_decoding), a copy unpacked from `packed` for the product at hand (one
// that gemm_packed has no kernel for).
Tensor plain_weight(const Tensor& values, const PackedMatrix* packed);
// Rows `ids` of a weight W (N, K) read from its packed copy as f32: out (ids.size(), K), the
// values the products multiply with (a tied embedding table looked up in decoding,
// ops::embedding_from_packed). An f32 or bf16 copy's values exactly; an s8 one's times its
// per-row scales `row_scales` (N).
void packed_rows(const PackedMatrix& packed, const std::vector<int32_t>& ids, float* out,
                 const float* row_scales = nullptr);

// A plain row-major bf16 copy of an f32 operand, rounded to nearest even: by attn's own loop when
// the view is plain (convert_to_bf16), else by a cached oneDNN reorder. An op that multiplies one operand more than
// once converts it once with this and hands gemm the bf16 view (ops::linear: x in the forward, dy in the backward).
Tensor bf16_copy(const MatrixView& view);
// An operand that more than one product reads, as gemm multiplies it in `precision`: the tensor
// itself, or in bf16 its bf16 copy, so that it is converted once.
Tensor matmul_operand(const Tensor& tensor, Precision precision);

// Whether oneDNN has a matmul for bf16 inputs on this CPU (it needs AVX-512 in 2.6); asked
// once by creating a small primitive.
bool bf16_gemm_supported();

// Floating-point operations (2 M N K per matrix) of every gemm since the last reset: the
// benchmark's exact model FLOP count, attention products included.
uint64_t gemm_flops();
void reset_gemm_flops();

}  // namespace attn::ops
