#pragma once
// BufferPool: recycles freed tensor storage. A training step allocates the same activation and
// gradient sizes as the step before, so fresh allocations would page-fault and zero-fill
// (the kernel's) the same megabytes every step. Blocks are grouped in size classes (four per
// power of two, at most 19% slack) so that batches of nearby shapes share them; when its own
// class has no free block, a request takes one of a larger class up to 1.5 x its size.
//
// What it keeps is bounded twice:
//   - `capacity` bytes of free blocks at most (a fixed backstop, 4 GiB);
//   - once a step has ended (end_step()), live and free blocks together stay within the live
//     high-water mark of the last few steps (this one included) plus an eighth (48 MiB at
//     least, so that a small process, a decoder, does not map and free its blocks anew every
//     step, which cost a beam search a sixth of its time in page faults): a free block
//     that would exceed it is returned to the system, and a new block that would exceed it
//     first evicts the least recently used free blocks. Batches of varying shapes thus reuse each other's memory
//     instead of each shape adding its own size classes, and the footprint follows what a step really needs.
// Blocks of 256 KiB and more are mapped pages of their own, so that a freed block goes back to
// the system at once (glibc would keep it in its heap, fragmented, below its mmap threshold),
// and are populated as they are mapped: one zero-filling call instead of a fault per page.
#include <cstddef>
#include <cstdint>
#include <deque>
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
  // A new block of at least `bytes`, all zeros, never a free one: a large block is mapped
  // without being populated, so that its pages count only as they are first written (a buffer
  // filled gradually while what it replaces is freed). Small blocks are zero-filled at once.
  void* acquire_zeroed(size_t bytes, size_t* capacity_bytes);

  // A step (one unit of repeated work) has ended: the limit on live + free bytes becomes the
  // highest live high-water mark of the last kStepWindow steps, free blocks over it are
  // returned, and this step's high-water mark starts over from the bytes live now.
  void end_step();
  static constexpr size_t kStepWindow = 8;
  static constexpr size_t kSlackDivisor = 8;  // the limit is the high-water mark + 1/kSlackDivisor of it
  static constexpr size_t kMinSlackBytes = size_t(48) << 20;  // but at least this much more (set_min_slack)

  struct Stats {
    size_t live_bytes = 0;        // handed out and not yet released
    size_t cached_bytes = 0;      // free blocks kept for reuse
    size_t high_water_bytes = 0;  // most live bytes since the last end_step()
    size_t limit_bytes = 0;       // bound on live + cached (the window's and this step's high-water
                                  // mark); 0 before the first end_step()
    uint64_t reuses = 0;          // acquisitions served from a free block
    size_t peak_bytes = 0;        // most live + cached bytes since the last reset_peak() or trim()
  };
  Stats stats() const;

  void set_capacity(size_t bytes);
  // The least slack above the high-water mark (kMinSlackBytes unless set): tests of what a
  // step releases set less, so that a few MiB show.
  void set_min_slack(size_t bytes);
  size_t cached_bytes() const { return stats().cached_bytes; }
  uint64_t reuses() const { return stats().reuses; }
  // Frees every cached block and forgets the step limit (tests, between unrelated workloads).
  void trim();
  // Starts peak_bytes over from the bytes held now (a benchmark's own peak).
  void reset_peak();

 private:
  struct SizeClass {
    std::vector<void*> blocks;
    uint64_t last_use = 0;  // use_clock_ at the last acquire or release of this class
  };

  static size_t size_class(size_t bytes);
  // A free block of class `size`, or else of the smallest larger class up to 1.5 x `size`
  // (batches of nearby shapes then reuse each other's blocks instead of evicting them).
  // free_.end() if none. Requires mutex_.
  std::unordered_map<size_t, SizeClass>::iterator find_free(size_t size);
  static void* allocate(size_t size, bool populate = true);
  // Counts a block about to be allocated in live bytes, the high-water mark and the peak, making
  // room under the limit first. Requires mutex_.
  void count_new_block(size_t size);
  static void deallocate(void* block, size_t size);
  size_t limit() const;  // requires mutex_
  bool over_limit(size_t extra) const;
  // Frees least recently used free blocks until `extra` more bytes fit the limit (or none
  // are left). Requires mutex_.
  void evict_for(size_t extra);

  mutable std::mutex mutex_;
  std::unordered_map<size_t, SizeClass> free_;
  size_t cached_bytes_ = 0;
  size_t live_bytes_ = 0;
  size_t high_water_ = 0;
  size_t limit_ = 0;
  size_t peak_ = 0;
  std::deque<size_t> recent_high_water_;  // the last kStepWindow steps
  size_t capacity_ = size_t(4) << 30;
  size_t min_slack_ = kMinSlackBytes;
  uint64_t reuses_ = 0;
  uint64_t use_clock_ = 0;
};

}  // namespace attn
