#include "core/buffer_pool.h"

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <new>
#include <sys/mman.h>

namespace attn {

namespace {
constexpr size_t kAlignment = 64;
constexpr size_t kSmallestClass = 256;
constexpr size_t kMappedClass = size_t(256) << 10;  // classes from here on are multiples of 64 KiB: whole pages
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

void* BufferPool::allocate(size_t size, bool populate) {
  if (size < kMappedClass) {
    void* block = std::aligned_alloc(kAlignment, size);
    if (!block) throw std::bad_alloc();
    return block;
  }
  // MAP_POPULATE: the kernel zero-fills the whole block in this one call. A block is mapped to be
  // written, and a fault per 4 KiB page on first touch is dear on a virtual machine, where each
  // fault exits to the hypervisor (docs/performance.md, "Beams that share their memory").
  void* block =
      mmap(nullptr, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | (populate ? MAP_POPULATE : 0), -1, 0);
  if (block == MAP_FAILED) throw std::bad_alloc();
  return block;
}

void BufferPool::deallocate(void* block, size_t size) {
  if (size < kMappedClass)
    std::free(block);
  else
    munmap(block, size);
}

// An eighth above the high-water mark: at the peak every byte is live, so a limit of exactly
// the peak leaves no free block of the sizes the next forward asks for first; a step then
// evicts and maps some ten blocks anew (page faults and the kernel's zeroing, about a tenth of
// a bf16 Transformer step). An eighth is the least slack that stopped it in attn-bench's
// Transformer and RNN.
size_t BufferPool::limit() const {
  return limit_ > 0 ? std::max(limit_ + std::max(limit_ / kSlackDivisor, min_slack_), high_water_) : 0;
}

bool BufferPool::over_limit(size_t extra) const { return limit_ > 0 && live_bytes_ + cached_bytes_ + extra > limit(); }

void BufferPool::evict_for(size_t extra) {
  while (cached_bytes_ > 0 && over_limit(extra)) {
    auto oldest = free_.end();
    for (auto it = free_.begin(); it != free_.end(); ++it)
      if (!it->second.blocks.empty() && (oldest == free_.end() || it->second.last_use < oldest->second.last_use))
        oldest = it;
    deallocate(oldest->second.blocks.back(), oldest->first);
    oldest->second.blocks.pop_back();
    cached_bytes_ -= oldest->first;
  }
}

std::unordered_map<size_t, BufferPool::SizeClass>::iterator BufferPool::find_free(size_t size) {
  auto exact = free_.find(size);
  if (exact != free_.end() && !exact->second.blocks.empty()) return exact;
  auto best = free_.end();
  for (auto it = free_.begin(); it != free_.end(); ++it)
    if (!it->second.blocks.empty() && it->first > size && it->first <= size + size / 2 &&
        (best == free_.end() || it->first < best->first))
      best = it;
  return best;
}

void* BufferPool::acquire(size_t bytes, size_t* capacity_bytes) {
  size_t size = size_class(bytes);
  {
    std::lock_guard<std::mutex> lock(mutex_);
    auto found = find_free(size);
    if (found != free_.end()) {
      SizeClass& size_class = found->second;
      void* block = size_class.blocks.back();
      size_class.blocks.pop_back();
      size_class.last_use = ++use_clock_;
      *capacity_bytes = found->first;
      cached_bytes_ -= found->first;
      live_bytes_ += found->first;
      high_water_ = std::max(high_water_, live_bytes_);
      ++reuses_;
      return block;
    }
    count_new_block(size);
  }
  *capacity_bytes = size;
  return allocate(size);
}

void* BufferPool::acquire_zeroed(size_t bytes, size_t* capacity_bytes) {
  size_t size = size_class(bytes);
  {
    std::lock_guard<std::mutex> lock(mutex_);
    count_new_block(size);
  }
  *capacity_bytes = size;
  void* block = allocate(size, false);
  if (size < kMappedClass) std::memset(block, 0, size);  // a mapping is zeros already
  return block;
}

void BufferPool::count_new_block(size_t size) {
  live_bytes_ += size;
  high_water_ = std::max(high_water_, live_bytes_);
  evict_for(0);  // live_bytes_ already counts the new block
  // Only a new block adds to what the pool holds: the peak is taken here.
  peak_ = std::max(peak_, live_bytes_ + cached_bytes_);
}

void BufferPool::release(void* block, size_t capacity_bytes) {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    live_bytes_ -= capacity_bytes;
    evict_for(capacity_bytes);
    if (cached_bytes_ + capacity_bytes <= capacity_ && !over_limit(capacity_bytes)) {
      SizeClass& size_class = free_[capacity_bytes];
      size_class.blocks.push_back(block);
      size_class.last_use = ++use_clock_;
      cached_bytes_ += capacity_bytes;
      return;
    }
  }
  deallocate(block, capacity_bytes);
}

void BufferPool::end_step() {
  std::lock_guard<std::mutex> lock(mutex_);
  recent_high_water_.push_back(high_water_);
  if (recent_high_water_.size() > kStepWindow) recent_high_water_.pop_front();
  limit_ = *std::max_element(recent_high_water_.begin(), recent_high_water_.end());
  high_water_ = live_bytes_;
  evict_for(0);
}

BufferPool::Stats BufferPool::stats() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return Stats{live_bytes_, cached_bytes_, high_water_, limit(), reuses_, peak_};
}

void BufferPool::set_capacity(size_t bytes) {
  std::lock_guard<std::mutex> lock(mutex_);
  capacity_ = bytes;
}

void BufferPool::set_min_slack(size_t bytes) {
  std::lock_guard<std::mutex> lock(mutex_);
  min_slack_ = bytes;
}

void BufferPool::trim() {
  std::lock_guard<std::mutex> lock(mutex_);
  for (auto& [size, size_class] : free_)
    for (void* block : size_class.blocks) deallocate(block, size);
  free_.clear();
  cached_bytes_ = 0;
  limit_ = 0;
  recent_high_water_.clear();
  high_water_ = live_bytes_;
  peak_ = live_bytes_;
}

void BufferPool::reset_peak() {
  std::lock_guard<std::mutex> lock(mutex_);
  peak_ = live_bytes_ + cached_bytes_;
}

}  // namespace attn
