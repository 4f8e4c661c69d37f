#include "core/matmul_weight.h"

namespace attn {

std::string precision_name(Precision precision) {
  switch (precision) {
    case Precision::f32:
      return "f32";
    case Precision::bf16:
      return "bf16";
    case Precision::int8:
      return "int8";
  }
  return "?";
}

std::optional<Precision> parse_precision(const std::string& name) {
  for (Precision precision : {Precision::f32, Precision::bf16, Precision::int8})
    if (name == precision_name(precision)) return precision;
  return std::nullopt;
}

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

}  // namespace attn
