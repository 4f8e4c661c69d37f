#include "core/tensor.h"

#include <algorithm>
#include <cstring>

namespace attn {

Tensor Tensor::empty(const Shape& shape, DType dtype) {
  for (int64_t dim : shape) ATTN_CHECK(dim >= 0, "negative dimension in shape ", to_string(shape));
  auto impl = std::make_shared<Impl>();
  impl->data = std::make_shared<Buffer>(attn::numel(shape) * dtype_size(dtype), false);
  impl->grad = std::make_shared<GradSlot>();
  impl->shape = shape;
  impl->dtype = dtype;
  return Tensor(impl);
}

Tensor Tensor::without_values(const Shape& shape, DType dtype) {
  for (int64_t dim : shape) ATTN_CHECK(dim >= 0, "negative dimension in shape ", to_string(shape));
  auto impl = std::make_shared<Impl>();
  impl->grad = std::make_shared<GradSlot>();
  impl->shape = shape;
  impl->dtype = dtype;
  return Tensor(impl);
}

Tensor Tensor::zeros(const Shape& shape, DType dtype) {
  Tensor tensor = empty(shape, dtype);
  std::memset(tensor.raw(), 0, tensor.numel() * dtype_size(dtype));
  return tensor;
}

Tensor Tensor::full(const Shape& shape, float value) {
  Tensor tensor = empty(shape);
  tensor.fill(value);
  return tensor;
}

Tensor Tensor::from_vector(const Shape& shape, const std::vector<float>& values) {
  Tensor tensor = empty(shape);
  tensor.copy_from(values);
  return tensor;
}

namespace {
void check_fits(const Buffer& data, size_t offset, const Shape& shape, DType dtype) {
  ATTN_CHECK((offset + attn::numel(shape)) * dtype_size(dtype) <= data.bytes(), "view ", to_string(shape),
             " at offset ", offset, " runs past its buffer");
}
}  // namespace

Tensor Tensor::view_of(BufferPtr data, std::shared_ptr<GradSlot> grad, size_t offset, const Shape& shape, DType dtype) {
  check_fits(*data, offset, shape, dtype);
  auto impl = std::make_shared<Impl>();
  impl->data = std::move(data);
  impl->grad = std::move(grad);
  impl->offset = offset;
  impl->shape = shape;
  impl->dtype = dtype;
  return Tensor(impl);
}

int64_t Tensor::dim(int axis) const {
  int r = rank();
  int resolved = axis < 0 ? axis + r : axis;
  ATTN_CHECK(resolved >= 0 && resolved < r, "axis ", axis, " out of range for shape ", to_string(shape()));
  return shape()[resolved];
}

namespace {
void check_has_values(const BufferPtr& data, const Shape& shape) {
  ATTN_CHECK(data, "tensor ", to_string(shape),
             " has no values: a handle kept for its gradient only (grad_only()), or a weight that decoding keeps "
             "packed only (ParameterStore::prepare_for_decoding)");
}
}  // namespace

void* Tensor::raw() {
  check_has_values(impl().data, impl().shape);
  return static_cast<char*>(impl().data->data()) + impl().offset * dtype_size(dtype());
}
const void* Tensor::raw() const {
  check_has_values(impl().data, impl().shape);
  return static_cast<const char*>(impl().data->data()) + impl().offset * dtype_size(dtype());
}

float* Tensor::data() {
  ATTN_CHECK(dtype() == DType::f32, "tensor ", to_string(shape()), " is not f32");
  return static_cast<float*>(raw());
}
const float* Tensor::data() const {
  ATTN_CHECK(dtype() == DType::f32, "tensor ", to_string(shape()), " is not f32");
  return static_cast<const float*>(raw());
}
uint16_t* Tensor::data_bf16() {
  ATTN_CHECK(dtype() == DType::bf16, "tensor ", to_string(shape()), " is not bf16");
  return static_cast<uint16_t*>(raw());
}
const uint16_t* Tensor::data_bf16() const {
  ATTN_CHECK(dtype() == DType::bf16, "tensor ", to_string(shape()), " is not bf16");
  return static_cast<const uint16_t*>(raw());
}

bool Tensor::has_grad() const { return impl().grad && impl().grad->buffer != nullptr; }

namespace {

// The gradient mirrors the whole data buffer in f32 so that every view finds its offset.
size_t gradient_elements(const BufferPtr& data, DType dtype, const GradSlot& slot) {
  return data ? data->bytes() / dtype_size(dtype) : slot.elements;
}

}  // namespace

Tensor Tensor::grad() const {
  Impl& self = impl();
  ATTN_CHECK(self.grad, "tensor ", to_string(self.shape), " has no gradient slot");
  if (!self.grad->buffer)
    self.grad->buffer =
        std::make_shared<Buffer>(gradient_elements(self.data, self.dtype, *self.grad) * sizeof(float), true);
  return view_of(self.grad->buffer, nullptr, self.offset, self.shape, DType::f32);
}

Tensor Tensor::grad_to_write(bool* fresh) const {
  Impl& self = impl();
  ATTN_CHECK(self.grad, "tensor ", to_string(self.shape), " has no gradient slot");
  const size_t elements = gradient_elements(self.data, self.dtype, *self.grad);
  *fresh = !self.grad->buffer && self.offset == 0 && static_cast<size_t>(numel()) == elements;
  if (*fresh) self.grad->buffer = std::make_shared<Buffer>(elements * sizeof(float), false);
  return grad();
}

void Tensor::zero_grad() {
  if (has_grad()) grad().fill(0.f);
}

void Tensor::reuse_data_as_grad() {
  Impl& self = impl();
  ATTN_CHECK(self.dtype == DType::f32 && self.data && self.grad && !self.grad->buffer, "tensor ", to_string(self.shape),
             " cannot take its values' buffer for its gradient");
  self.grad->buffer = self.data;
}

Tensor Tensor::view(const Shape& shape) const {
  ATTN_CHECK(attn::numel(shape) == numel(), "cannot view ", to_string(this->shape()), " as ", to_string(shape));
  auto impl = std::make_shared<Impl>(this->impl());
  impl->shape = shape;
  return Tensor(impl);
}

Tensor Tensor::detach() const {
  auto impl = std::make_shared<Impl>(this->impl());
  impl->grad = std::make_shared<GradSlot>();
  impl->requires_grad = false;
  return Tensor(impl);
}

Tensor Tensor::grad_only() const {
  Impl& self = impl();
  if (self.grad && self.data && self.grad->elements == 0)
    self.grad->elements = self.data->bytes() / dtype_size(self.dtype);
  auto impl = std::make_shared<Impl>(self);
  impl->data = nullptr;
  return Tensor(impl);
}

Tensor Tensor::clone() const {
  Tensor copy = empty(shape(), dtype());
  std::memcpy(copy.raw(), raw(), numel() * dtype_size(dtype()));
  return copy;
}

std::vector<float> Tensor::to_vector() const {
  std::vector<float> values(numel());
  if (dtype() == DType::f32) {
    std::copy(data(), data() + numel(), values.begin());
  } else {
    for (int64_t i = 0; i < numel(); ++i) values[i] = bf16_to_f32(data_bf16()[i]);
  }
  return values;
}

float Tensor::item() const {
  ATTN_CHECK(numel() == 1, "item() of a tensor with shape ", to_string(shape()));
  return to_vector()[0];
}

void Tensor::fill(float value) {
  float* values = data();
  std::fill(values, values + numel(), value);
}

void Tensor::copy_from(const std::vector<float>& values) {
  ATTN_CHECK(static_cast<int64_t>(values.size()) == numel(), "copy of ", values.size(), " values into ",
             to_string(shape()));
  std::copy(values.begin(), values.end(), data());
}

bool Tensor::same_storage(const Tensor& other) const {
  return impl().data && impl().data == other.impl().data && impl().offset == other.impl().offset;
}

void Tensor::rebind(BufferPtr data, std::shared_ptr<GradSlot> grad, size_t offset) {
  Impl& self = impl();
  ATTN_CHECK(data, "rebind of tensor ", to_string(self.shape), " onto a null buffer");
  check_fits(*data, offset, self.shape, self.dtype);
  self.data = std::move(data);
  self.grad = std::move(grad);
  self.offset = offset;
}

void Tensor::adopt_values(const Tensor& source) {
  Impl& self = impl();
  const Impl& other = source.impl();
  ATTN_CHECK(other.data && other.shape == self.shape && other.dtype == self.dtype,
             "adopt_values: ", dtype_name(other.dtype), " ", to_string(other.shape), " cannot become the values of ",
             dtype_name(self.dtype), " ", to_string(self.shape));
  self.data = other.data;
  self.offset = other.offset;
  self.grad = std::make_shared<GradSlot>();
}

void Tensor::drop_values() {
  Impl& self = impl();
  self.data = nullptr;
  self.offset = 0;
}

}  // namespace attn
