#include "core/buffer.h"

#include <cstring>

#include "core/buffer_pool.h"

namespace attn {

Buffer::Buffer(size_t bytes, bool zero_fill) : bytes_(bytes) {
  data_ = BufferPool::instance().acquire(bytes, &capacity_);
  if (zero_fill) std::memset(data_, 0, bytes);
}

Buffer::~Buffer() { BufferPool::instance().release(data_, capacity_); }

}  // namespace attn
