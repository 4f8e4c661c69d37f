#include "core/buffer.h"

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <sys/mman.h>
#include <unistd.h>

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

void Buffer::populate(size_t offset, size_t bytes) {
#ifdef MADV_POPULATE_WRITE
  static const uintptr_t page = uintptr_t(sysconf(_SC_PAGESIZE));
  const uintptr_t first = (reinterpret_cast<uintptr_t>(data_) + offset) / page * page;
  const uintptr_t last = reinterpret_cast<uintptr_t>(data_) + std::min(offset + bytes, bytes_);
  if (last > first) madvise(reinterpret_cast<void*>(first), last - first, MADV_POPULATE_WRITE);
#else
  (void)offset;
  (void)bytes;
#endif
}

Buffer::~Buffer() { BufferPool::instance().release(data_, capacity_); }

}  // namespace attn
