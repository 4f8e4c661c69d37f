#pragma once
// Tensor: a shared handle to a contiguous row-major block of f32 (or bf16) values, plus the
// gradient slot that autograd accumulates into.
//
// Copies of a Tensor share data and gradient (like shared_ptr). A view (view(), or a named
// slice of the flat parameter buffer) shares the storage at an offset; its gradient is the
// same offset in a gradient buffer that mirrors the data buffer element for element, so a
// reshaped activation and the original see one gradient.
#include <memory>
#include <vector>

#include "core/buffer.h"
#include "core/check.h"
#include "core/dtype.h"
#include "core/shape.h"

namespace attn {

// The gradient storage shared by every view of one data buffer; allocated (zeroed) on first use.
struct GradSlot {
  BufferPtr buffer;
  size_t elements = 0;  // the gradient's length when no handle with values is left to tell it
};

class Tensor {
 public:
  Tensor() = default;

  static Tensor empty(const Shape& shape, DType dtype = DType::f32);
  static Tensor zeros(const Shape& shape, DType dtype = DType::f32);
  static Tensor full(const Shape& shape, float value);
  static Tensor from_vector(const Shape& shape, const std::vector<float>& values);
  // A handle of `shape` whose values come later (adopt_values): a parameter a checkpoint fills.
  static Tensor without_values(const Shape& shape, DType dtype = DType::f32);
  // A view of `count` elements of `data` at element `offset`, with its gradient at the same
  // offset of `grad` (used for the flat parameter buffer).
  static Tensor view_of(BufferPtr data, std::shared_ptr<GradSlot> grad, size_t offset, const Shape& shape,
                        DType dtype = DType::f32);

  bool defined() const { return impl_ != nullptr; }
  const Shape& shape() const { return impl().shape; }
  int rank() const { return static_cast<int>(impl().shape.size()); }
  int64_t dim(int axis) const;  // negative axis counts from the end
  int64_t numel() const { return attn::numel(impl().shape); }
  DType dtype() const { return impl().dtype; }

  float* data();
  const float* data() const;
  uint16_t* data_bf16();
  const uint16_t* data_bf16() const;
  void* raw();
  const void* raw() const;

  bool requires_grad() const { return impl().requires_grad; }
  void set_requires_grad(bool value) { impl().requires_grad = value; }
  bool has_grad() const;
  // The gradient (f32, same shape), zero-filled on first access.
  Tensor grad() const;
  // The gradient for a backward about to write every element of it. When nothing has touched
  // the gradient yet and this tensor spans its whole buffer, the buffer is made WITHOUT zeroing
  // and *fresh is true: the caller must then overwrite all of it (a gemm without its sum
  // post-op, a copy instead of an add), which spares a memset and a read of the zeros.
  // Otherwise it is grad() and *fresh is false: add to it.
  Tensor grad_to_write(bool* fresh) const;
  void zero_grad();
  // Makes the data buffer the gradient buffer as well, for a backward that turns the values
  // into their gradient in place (cross-entropy over the logits: one (N, V) buffer less).
  // The values are gone from then on, for this handle and every view of it. Needs f32 and no
  // gradient yet.
  void reuse_data_as_grad();

  // Same storage and gradient, another shape with the same element count.
  Tensor view(const Shape& shape) const;
  // Same storage, no gradient tracking.
  Tensor detach() const;
  // The same gradient slot, shape and requires_grad, without the values. A backward closure
  // that only reads or adds to a tensor's gradient captures this instead of the tensor, so
  // that the values are freed as soon as no later op needs them: most of what a training step
  // would otherwise keep until its backward (a linear's output under dropout, relu's input).
  // data() and raw() of such a handle fail.
  Tensor grad_only() const;
  bool has_values() const { return impl().data != nullptr; }
  // A fresh copy of the values (no gradient).
  Tensor clone() const;

  std::vector<float> to_vector() const;
  float item() const;  // the single value of a one-element tensor
  void fill(float value);
  void copy_from(const std::vector<float>& values);

  // True when both handles point at the same storage and offset.
  bool same_storage(const Tensor& other) const;

  // Moves this tensor onto `data` at element `offset`, with its gradient in `grad`, keeping
  // shape, dtype and requires_grad. It changes the shared Impl in place, so EVERY copy of
  // this handle sees the new storage: that is how the ParameterStore packs parameters into
  // one flat buffer after layers already hold their handles. The values are not copied (the
  // caller copies them first). Views made earlier with view()/detach() own a separate Impl
  // and keep the old storage, so rebind before taking views.
  void rebind(BufferPtr data, std::shared_ptr<GradSlot> grad, size_t offset);
  // Frees the values for EVERY copy of this handle (the shared Impl, as rebind): a decoding
  // store drops the plain copy of a weight it multiplies packed. Shape and dtype stay; data()
  // and raw() fail from then on.
  void drop_values();
  // Makes `source`'s values (same shape and dtype) this handle's, for EVERY copy of it (the
  // shared Impl, as rebind), without a copy; the gradient starts anew.
  void adopt_values(const Tensor& source);

 private:
  struct Impl {
    BufferPtr data;
    std::shared_ptr<GradSlot> grad;
    size_t offset = 0;  // in elements
    Shape shape;
    DType dtype = DType::f32;
    bool requires_grad = false;
  };
  explicit Tensor(std::shared_ptr<Impl> impl) : impl_(std::move(impl)) {}
  Impl& impl() const {
    ATTN_CHECK(impl_, "use of an undefined tensor");
    return *impl_;
  }

  std::shared_ptr<Impl> impl_;
};

}  // namespace attn
