#pragma once
// Buffer: one 64-byte aligned block of bytes (cache lines, AVX-512 loads), taken from and
// returned to the BufferPool so that steady-state training allocates nothing new.
#include <cstddef>
#include <memory>

namespace attn {

class Buffer {
 public:
  // zero_fill: gradients and accumulators start at zero; activations need not.
  Buffer(size_t bytes, bool zero_fill);
  // All zeros that count only as they are written (BufferPool::acquire_zeroed): a large buffer
  // filled gradually while what it replaces is freed.
  static std::shared_ptr<Buffer> zeroed_on_touch(size_t bytes);
  ~Buffer();
  Buffer(const Buffer&) = delete;
  Buffer& operator=(const Buffer&) = delete;

  // Maps the pages of [offset, offset + bytes) for writing in one call, where a buffer zeroed
  // on touch would otherwise fault on each page (dear on a virtual machine). Best effort: a
  // kernel without MADV_POPULATE_WRITE (before 5.14) faults them in as they are written.
  void populate(size_t offset, size_t bytes);

  void* data() { return data_; }
  const void* data() const { return data_; }
  size_t bytes() const { return bytes_; }

 private:
  Buffer() = default;

  void* data_ = nullptr;
  size_t bytes_ = 0;
  size_t capacity_ = 0;  // the pool block's real size
};

using BufferPtr = std::shared_ptr<Buffer>;

}  // namespace attn
