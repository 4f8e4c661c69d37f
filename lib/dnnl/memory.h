#pragma once
// Helpers between attn tensors and oneDNN memory objects.
#include <oneapi/dnnl/dnnl.hpp>

#include "core/tensor.h"

namespace attn::dnn {

dnnl::memory::data_type to_dnnl(DType dtype);
dnnl::memory::dims to_dims(const Shape& shape);

// Plain row-major descriptor of a tensor's shape.
dnnl::memory::desc plain_desc(const Shape& shape, DType dtype = DType::f32);
// Descriptor with explicit strides (transposes and head splits without copies).
dnnl::memory::desc strided_desc(const Shape& dims, const Shape& strides, DType dtype = DType::f32);

// A oneDNN memory object over existing storage (no copy).
dnnl::memory wrap(const dnnl::memory::desc& desc, const void* data);
dnnl::memory wrap(const Tensor& tensor);

}  // namespace attn::dnn
