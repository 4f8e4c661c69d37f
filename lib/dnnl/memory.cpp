#include "dnnl/memory.h"

#include "dnnl/context.h"

namespace attn::dnn {

dnnl::memory::data_type to_dnnl(DType dtype) {
  switch (dtype) {
    case DType::f32:
      return dnnl::memory::data_type::f32;
    case DType::bf16:
      return dnnl::memory::data_type::bf16;
    case DType::s8:
      return dnnl::memory::data_type::s8;
  }
  return dnnl::memory::data_type::undef;
}

dnnl::memory::dims to_dims(const Shape& shape) { return dnnl::memory::dims(shape.begin(), shape.end()); }

dnnl::memory::desc plain_desc(const Shape& shape, DType dtype) {
  return strided_desc(shape, row_major_strides(shape), dtype);
}

dnnl::memory::desc strided_desc(const Shape& dims, const Shape& strides, DType dtype) {
  return dnnl::memory::desc(to_dims(dims), to_dnnl(dtype), to_dims(strides));
}

dnnl::memory wrap(const dnnl::memory::desc& desc, const void* data) {
  // oneDNN takes a non-const handle; primitives only write to their destination arguments.
  return dnnl::memory(desc, Context::get().engine(), const_cast<void*>(data));
}

dnnl::memory wrap(const Tensor& tensor) { return wrap(plain_desc(tensor.shape(), tensor.dtype()), tensor.raw()); }

}  // namespace attn::dnn
