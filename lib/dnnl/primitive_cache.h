#pragma once
// PrimitiveCache: oneDNN primitives created once per distinct (op, shapes, strides, dtype,
// flags) key and reused. Creating a primitive descriptor costs microseconds to milliseconds;
// a training step runs thousands of primitives, so every op goes through this cache.
#include <algorithm>
#include <any>
#include <cstdint>
#include <cstring>
#include <list>
#include <string>
#include <unordered_map>

#include "core/shape.h"

namespace attn::dnn {

class PrimitiveCache {
 public:
  // Bounded: the least recently used entry goes once `capacity()` are held. Unbounded, the cache
  // grew for the whole of a training run, because every batch shape (sentences x source x
  // target lengths) and every decoding step length of validation keys primitives of its own;
  // each holds a descriptor and jitted code (its scratch space is the context's,
  // dnn::Context::scratchpad). 1,024 holds a run's working set with nearly every fetch a hit and
  // RSS flat; a larger bound let a long run's RSS grow with the entries (docs/performance.md,
  // "Memory", the long-run proof).
  static constexpr size_t kDefaultCapacity = 1024;
  // A reference from get() must stay valid while an op fetches its few other primitives.
  static constexpr size_t kMinimumCapacity = 64;

  explicit PrimitiveCache(size_t capacity = kDefaultCapacity) { set_capacity(capacity); }

  // Returns the entry stored under `key`, building it with `make()` on the first request.
  // Entry is any copyable struct holding a primitive descriptor and its primitive. The
  // reference stays valid for the next kMinimumCapacity - 1 calls at least: an op may hold it
  // while it fetches others, but must not keep it across ops.
  template <class Entry, class Make>
  Entry& get(const std::string& key, Make&& make) {
    auto found = index_.find(key);
    if (found != index_.end()) {
      ++hits_;
      entries_.splice(entries_.begin(), entries_, found->second);  // now the most recent
      return *std::any_cast<Entry>(&found->second->value);
    }
    ++misses_;
    entries_.push_front(Slot{key, std::any(Entry(make()))});
    index_.emplace(key, entries_.begin());
    evict_to(capacity_);
    return *std::any_cast<Entry>(&entries_.front().value);
  }

  uint64_t hits() const { return hits_; }
  uint64_t misses() const { return misses_; }
  uint64_t evictions() const { return evictions_; }
  size_t size() const { return entries_.size(); }
  size_t capacity() const { return capacity_; }
  void set_capacity(size_t capacity) {
    capacity_ = std::max(capacity, kMinimumCapacity);
    evict_to(capacity_);
  }
  double hit_rate() const { return hits_ + misses_ ? double(hits_) / double(hits_ + misses_) : 1.0; }
  void reset_counters() { hits_ = misses_ = evictions_ = 0; }
  void clear() {
    index_.clear();
    entries_.clear();
    reset_counters();
  }

 private:
  struct Slot {
    std::string key;
    std::any value;
  };
  void evict_to(size_t count) {
    while (entries_.size() > count) {
      index_.erase(entries_.back().key);
      entries_.pop_back();
      ++evictions_;
    }
  }

  std::list<Slot> entries_;  // most recently used first
  std::unordered_map<std::string, std::list<Slot>::iterator> index_;
  size_t capacity_ = kDefaultCapacity;
  uint64_t hits_ = 0;
  uint64_t misses_ = 0;
  uint64_t evictions_ = 0;
};

// Builds cache keys: CacheKey("matmul").add(shape).add(flag).str().
class CacheKey {
 public:
  explicit CacheKey(const char* op) : text_(op) {}
  CacheKey& add(int64_t value) {
    text_ += ':';
    text_ += std::to_string(value);
    return *this;
  }
  CacheKey& add(float value) {  // the exact bits: 1e-7 and 1e-8 must not share a primitive
    uint32_t bits;
    std::memcpy(&bits, &value, sizeof bits);
    text_ += ":f";
    text_ += std::to_string(bits);
    return *this;
  }
  CacheKey& add(const Shape& shape) {
    text_ += '[';
    for (int64_t dim : shape) {
      text_ += std::to_string(dim);
      text_ += ',';
    }
    text_ += ']';
    return *this;
  }
  const std::string& str() const { return text_; }

 private:
  std::string text_;
};

}  // namespace attn::dnn
