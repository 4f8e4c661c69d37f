#include "core/buffer_pool.h"

#include <cstdlib>
#include <new>

namespace attn {

namespace {
constexpr size_t kAlignment = 64;
constexpr size_t kSmallestClass = 256;
}  // namespace

BufferPool& BufferPool::instance() {
  static BufferPool* pool = new BufferPool();  // never destroyed: tensors may outlive statics
  return *pool;
}

size_t BufferPool::size_class(size_t bytes) {
  if (bytes <= kSmallestClass) return kSmallestClass;
  // Round up to one of 4 steps between consecutive powers of two: 2^k * {1, 1.25, 1.5, 1.75}.
  size_t power = size_t(1) << (63 - __builtin_clzll(bytes - 1));
  size_t step = power / 4;
  return (bytes + step - 1) / step * step;
}

void* BufferPool::acquire(size_t bytes, size_t* capacity_bytes) {
  size_t size = size_class(bytes);
  *capacity_bytes = size;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    auto found = free_.find(size);
    if (found != free_.end() && !found->second.empty()) {
      void* block = found->second.back();
      found->second.pop_back();
      cached_bytes_ -= size;
      ++reuses_;
      return block;
    }
  }
  void* block = std::aligned_alloc(kAlignment, size);
  if (!block) throw std::bad_alloc();
  return block;
}

void BufferPool::release(void* block, size_t capacity_bytes) {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    if (cached_bytes_ + capacity_bytes <= capacity_) {
      free_[capacity_bytes].push_back(block);
      cached_bytes_ += capacity_bytes;
      return;
    }
  }
  std::free(block);
}

void BufferPool::set_capacity(size_t bytes) {
  std::lock_guard<std::mutex> lock(mutex_);
  capacity_ = bytes;
}

void BufferPool::trim() {
  std::lock_guard<std::mutex> lock(mutex_);
  for (auto& [size, blocks] : free_)
    for (void* block : blocks) std::free(block);
  free_.clear();
  cached_bytes_ = 0;
}

}  // namespace attn
