#include "core/matmul_weight.h"

namespace attn {

void MatmulWeight::prepare(Precision target) {
  ATTN_CHECK(f32.defined() && f32.rank() == 2, "matmul weight: needs an f32 matrix");
  int8 = QuantizedMatrix();
  packed.reset();
  // bf16 training refreshes the copy every step: it reuses the buffer it already has.
  if (target != Precision::bf16 || !bf16.defined() || bf16.shape() != f32.shape()) bf16 = Tensor();
  precision = target;
  if (target == Precision::bf16) {
    if (!bf16.defined()) bf16 = Tensor::empty(f32.shape(), DType::bf16);
    convert_to_bf16(f32.data(), bf16.data_bf16(), f32.numel());
  } else if (target == Precision::int8) {
    int8 = quantize_rows(f32);
  }
}

const Tensor& MatmulWeight::prepared() const {
  return precision == Precision::int8 ? int8.values : precision == Precision::bf16 ? bf16 : f32;
}

}  // namespace attn
