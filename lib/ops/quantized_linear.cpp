#include "ops/quantized_linear.h"

#include <oneapi/dnnl/dnnl.hpp>

#include "dnnl/context.h"
#include "dnnl/memory.h"

namespace attn::ops {

namespace {

struct Int8MatmulEntry {
  dnnl::matmul primitive;
};

// acc (M, N) = xq (M, K) wq^T, times the per-column scales given at execution.
dnnl::matmul& int8_matmul(int64_t rows, int64_t inner, int64_t cols) {
  auto& context = dnn::Context::get();
  dnn::CacheKey key("matmul_s8");
  key.add(Shape{rows, inner, cols});
  return context.cache()
      .get<Int8MatmulEntry>(key.str(),
                            [&] {
                              auto src = dnn::plain_desc({rows, inner}, DType::s8);
                              auto weights = dnn::strided_desc({inner, cols}, {1, inner}, DType::s8);
                              auto dst = dnn::plain_desc({rows, cols});
                              dnnl::primitive_attr attr;
                              attr.set_output_scales(1 << 1, {DNNL_RUNTIME_F32_VAL});
                              dnnl::matmul::primitive_desc pd(dnnl::matmul::desc(src, weights, dst), attr,
                                                              context.engine());
                              return Int8MatmulEntry{dnnl::matmul(pd)};
                            })
      .primitive;
}

}  // namespace

Tensor quantized_linear(const Tensor& x_in, const QuantizedMatrix& weight, const Tensor& bias) {
  ATTN_CHECK(weight.defined() && weight.values.rank() == 2 && x_in.rank() >= 1 && x_in.dim(-1) == weight.values.dim(1),
             "quantized_linear: input ", to_string(x_in.shape()), " does not fit weight ",
             weight.defined() ? to_string(weight.values.shape()) : "(none)");
  const int64_t inner = weight.values.dim(1), cols = weight.values.dim(0);
  ATTN_CHECK(!bias.defined() || bias.shape() == Shape{cols}, "quantized_linear: bias ",
             bias.defined() ? to_string(bias.shape()) : "", " does not fit weight ", to_string(weight.values.shape()));
  const int64_t rows = x_in.numel() / inner;
  QuantizedMatrix x = quantize_rows(x_in.view({rows, inner}), kActivationLevels);
  Tensor y = Tensor::empty({rows, cols});

  auto& context = dnn::Context::get();
  auto scales_desc = dnn::plain_desc({cols});
  int8_matmul(rows, inner, cols)
      .execute(
          context.stream(),
          {{DNNL_ARG_SRC, dnn::wrap(dnn::plain_desc({rows, inner}, DType::s8), x.values.raw())},
           {DNNL_ARG_WEIGHTS, dnn::wrap(dnn::strided_desc({inner, cols}, {1, inner}, DType::s8), weight.values.raw())},
           {DNNL_ARG_DST, dnn::wrap(dnn::plain_desc({rows, cols}), y.raw())},
           {DNNL_ARG_ATTR_OUTPUT_SCALES, dnn::wrap(scales_desc, weight.scales.raw())}});

  const float* row_scales = x.scales.data();
  const float* b = bias.defined() ? bias.data() : nullptr;
  float* out = y.data();
#pragma omp parallel for schedule(static) if (rows * cols > 65536)
  for (int64_t i = 0; i < rows; ++i) {
    float* row = out + i * cols;
    const float scale = row_scales[i];
    if (b) {
#pragma omp simd
      for (int64_t n = 0; n < cols; ++n) row[n] = row[n] * scale + b[n];
    } else {
#pragma omp simd
      for (int64_t n = 0; n < cols; ++n) row[n] *= scale;
    }
  }
  Shape shape = x_in.shape();
  shape.back() = cols;
  return y.view(shape);
}

}  // namespace attn::ops
