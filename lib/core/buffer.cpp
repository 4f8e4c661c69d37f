#include "core/buffer.h"

#include <cstdlib>
#include <cstring>
#include <new>

namespace attn {

namespace {
constexpr size_t kAlignment = 64;
}

Buffer::Buffer(size_t bytes, bool zero_fill) : bytes_(bytes) {
  size_t rounded = (bytes + kAlignment - 1) / kAlignment * kAlignment;
  if (rounded == 0) rounded = kAlignment;
  data_ = std::aligned_alloc(kAlignment, rounded);
  if (!data_) throw std::bad_alloc();
  if (zero_fill) std::memset(data_, 0, rounded);
}

Buffer::~Buffer() { std::free(data_); }

}  // namespace attn
