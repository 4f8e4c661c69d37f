#include "core/buffer.h"

#include <cstring>

#include "core/buffer_pool.h"

namespace attn {

Buffer::Buffer(size_t bytes, bool zero_fill) : bytes_(bytes) {
  data_ = BufferPool::instance().acquire(bytes, &capacity_);
  if (zero_fill) std::memset(data_, 0, bytes);
}

std::shared_ptr<Buffer> Buffer::zeroed_on_touch(size_t bytes) {
  std::shared_ptr<Buffer> buffer(new Buffer());
  buffer->bytes_ = bytes;
  buffer->data_ = BufferPool::instance().acquire_zeroed(bytes, &buffer->capacity_);
  return buffer;
}

Buffer::~Buffer() { BufferPool::instance().release(data_, capacity_); }

}  // namespace attn
