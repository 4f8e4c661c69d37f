#pragma once
// PrimitiveCache: oneDNN primitives created once per distinct (op, shapes, strides, dtype,
// flags) key and reused. Creating a primitive descriptor costs microseconds to milliseconds;
// a training step runs thousands of primitives, so every op goes through this cache.
#include <any>
#include <cstdint>
#include <cstring>
#include <string>
#include <unordered_map>

#include "core/shape.h"

namespace attn::dnn {

class PrimitiveCache {
 public:
  // Returns the entry stored under `key`, building it with `make()` on the first request.
  // Entry is any copyable struct holding a primitive descriptor and its primitive.
  template <class Entry, class Make>
  Entry& get(const std::string& key, Make&& make) {
    auto found = entries_.find(key);
    if (found != entries_.end()) {
      ++hits_;
      return *std::any_cast<Entry>(&found->second);
    }
    ++misses_;
    auto inserted = entries_.emplace(key, std::any(Entry(make())));
    return *std::any_cast<Entry>(&inserted.first->second);
  }

  uint64_t hits() const { return hits_; }
  uint64_t misses() const { return misses_; }
  size_t size() const { return entries_.size(); }
  double hit_rate() const { return hits_ + misses_ ? double(hits_) / double(hits_ + misses_) : 1.0; }
  void reset_counters() { hits_ = misses_ = 0; }
  void clear() {
    entries_.clear();
    reset_counters();
  }

 private:
  std::unordered_map<std::string, std::any> entries_;
  uint64_t hits_ = 0;
  uint64_t misses_ = 0;
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
