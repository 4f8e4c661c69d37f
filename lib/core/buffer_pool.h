#pragma once
// BufferPool: recycles freed tensor storage. A training step allocates the same activation and
// gradient sizes as the step before, so fresh allocations would page-fault and zero-fill
// (the kernel's) the same megabytes every step. Blocks are grouped in size classes (four per
// power of two, at most 19% slack) so that batches of nearby shapes share them; the pool keeps
// at most `capacity` bytes of free blocks and returns the rest to the system.
#include <cstddef>
#include <cstdint>
#include <mutex>
#include <unordered_map>
#include <vector>

namespace attn {

class BufferPool {
 public:
  static BufferPool& instance();

  // A 64-byte aligned block of at least `bytes`; `*capacity_bytes` receives its real size.
  void* acquire(size_t bytes, size_t* capacity_bytes);
  void release(void* block, size_t capacity_bytes);

  void set_capacity(size_t bytes);
  size_t cached_bytes() const { return cached_bytes_; }
  uint64_t reuses() const { return reuses_; }
  void trim();  // frees every cached block

 private:
  static size_t size_class(size_t bytes);

  std::mutex mutex_;
  std::unordered_map<size_t, std::vector<void*>> free_;
  size_t cached_bytes_ = 0;
  size_t capacity_ = size_t(4) << 30;
  uint64_t reuses_ = 0;
};

}  // namespace attn
