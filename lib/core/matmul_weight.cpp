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
  bf16 = Tensor();
  int8 = QuantizedMatrix();
  precision = target;
  if (target == Precision::bf16) {
    bf16 = Tensor::empty(f32.shape(), DType::bf16);
    const float* in = f32.data();
    auto* out = static_cast<uint16_t*>(bf16.raw());
    for (int64_t i = 0; i < f32.numel(); ++i) out[i] = f32_to_bf16(in[i]);
  } else if (target == Precision::int8) {
    int8 = quantize_rows(f32);
  }
}

}  // namespace attn
