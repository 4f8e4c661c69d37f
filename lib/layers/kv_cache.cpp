#include "layers/kv_cache.h"

#include <algorithm>
#include <cstring>

#include "core/parallel.h"
#include "layers/row_gather.h"

namespace attn::layers {

namespace {

std::vector<int64_t> every_row(int64_t count) {
  std::vector<int64_t> rows(static_cast<size_t>(count));
  for (size_t b = 0; b < rows.size(); ++b) rows[b] = static_cast<int64_t>(b);
  return rows;
}

// Room for a quarter more steps (8 at least) than `steps`: a storage then serves several steps
// before it has to grow, and a long search holds at most 2.5x its cache.
int64_t capacity_for(int64_t steps) { return steps + std::max<int64_t>(8, steps / 4); }

// The first `steps` time positions of rows `rows` of `from` (B, H, capacity, Dh) into the
// first positions of `into` (B', H, capacity', Dh), any dtype.
void copy_steps(const Tensor& from, const std::vector<int64_t>& rows, int64_t steps, Tensor& into) {
  const int64_t kept = into.dim(0), heads = from.dim(1);
  for (int64_t row : rows)
    ATTN_CHECK(row >= 0 && row < from.dim(0), "kv cache: row ", row, " of ", to_string(from.shape()));
  const size_t position_bytes = size_t(from.dim(3)) * dtype_size(from.dtype());
  const size_t from_plane = size_t(from.dim(2)) * position_bytes, into_plane = size_t(into.dim(2)) * position_bytes;
  const char* source = static_cast<const char*>(from.raw());
  char* target = static_cast<char*>(into.raw());
  // A beam step copies every layer's whole cache: memory-bound, so the threads share it.
  parallel_for(kept, heads * steps * from.dim(3), [&](int64_t first, int64_t last) {
    for (int64_t b = first; b < last; ++b)
      for (int64_t h = 0; h < heads; ++h)
        std::memcpy(target + (b * heads + h) * into_plane, source + (rows[b] * heads + h) * from_plane,
                    size_t(steps) * position_bytes);
  });
}

// step (B, H, 1, Dh) into time position `position` of `into` (B, H, capacity, Dh), both f32.
void write_step(const Tensor& step, int64_t position, Tensor& into) {
  const int64_t planes = step.dim(0) * step.dim(1), width = step.dim(3);
  const float* source = step.data();
  float* target = into.data() + position * width;
  for (int64_t p = 0; p < planes; ++p)
    std::memcpy(target + p * into.dim(2) * width, source + p * width, size_t(width) * sizeof(float));
}

// The first `steps` time positions of rows `rows` of `storage` (B, H, capacity, Dh) as a
// contiguous tensor: the storage itself when it holds no more and every row once, in order.
Tensor first_steps(const Tensor& storage, int64_t steps, const std::optional<std::vector<int64_t>>& rows) {
  if (storage.dim(2) == steps && !rows) return storage;
  const std::vector<int64_t> kept = rows ? *rows : every_row(storage.dim(0));
  Tensor result = Tensor::empty({int64_t(kept.size()), storage.dim(1), steps, storage.dim(3)}, storage.dtype());
  copy_steps(storage, kept, steps, result);
  return result;
}

}  // namespace

Tensor StoragePair::next(const Shape& planes_and_width, int64_t steps, int64_t reserve_steps, DType dtype) {
  // planes_and_width: (B, H, -, Dh); the time axis is what this chooses.
  const size_t step_bytes = size_t(planes_and_width[0] * planes_and_width[1] * planes_and_width[3]) * dtype_size(dtype);
  BufferPtr& storage = storage_[next_];
  next_ = 1 - next_;
  if (!storage || storage->bytes() < size_t(steps) * step_bytes || storage.use_count() > 1) {
    storage.reset();  // back to the pool before the new one is taken
    storage = std::make_shared<Buffer>(size_t(std::max(steps, reserve_steps)) * step_bytes, false);
  }
  const int64_t capacity = step_bytes == 0 ? steps : int64_t(storage->bytes() / step_bytes);
  return Tensor::view_of(storage, nullptr, 0, {planes_and_width[0], planes_and_width[1], capacity, planes_and_width[3]},
                         dtype);
}

KvCache::KvCache(Tensor keys, Tensor values) : keys_(std::move(keys)), values_(std::move(values)) {
  ATTN_CHECK(keys_.rank() == 4 && values_.shape() == keys_.shape(), "kv cache: keys ", to_string(keys_.shape()),
             " and values ", to_string(values_.shape()), " differ");
  steps_ = keys_.dim(2);
}

Tensor KvCache::keys() const { return empty() ? keys_ : first_steps(keys_, steps_, row_map_); }
Tensor KvCache::values() const { return empty() ? values_ : first_steps(values_, steps_, row_map_); }

void KvCache::append(const Tensor& step_keys, const Tensor& step_values) {
  ATTN_CHECK(step_keys.rank() == 4 && step_keys.dim(2) == 1 && step_values.shape() == step_keys.shape() &&
                 step_keys.dtype() == DType::f32 && step_values.dtype() == DType::f32,
             "kv cache: a step's keys ", to_string(step_keys.shape()), " and values ", to_string(step_values.shape()),
             " must be (B, H, 1, Dh), f32");
  if (!empty()) {  // the step's rows are the cache's after its reorders
    const int64_t rows = row_map_ ? int64_t(row_map_->size()) : keys_.dim(0);
    ATTN_CHECK(rows == step_keys.dim(0) && keys_.dim(1) == step_keys.dim(1) && keys_.dim(3) == step_keys.dim(3) &&
                   keys_.dtype() == DType::f32,
               "kv cache: a step ", to_string(step_keys.shape()), " for ", rows, " rows of ", to_string(keys_.shape()));
  }
  if (empty() || row_map_ || steps_ == keys_.dim(2)) {  // no room in place: copy into the other storage
    const int64_t steps = steps_ + 1, reserve = capacity_for(steps);
    Tensor new_keys = key_storage_.next(step_keys.shape(), steps, reserve, DType::f32);
    Tensor new_values = value_storage_.next(step_keys.shape(), steps, reserve, DType::f32);
    if (!empty()) {
      const std::vector<int64_t> rows = row_map_ ? *row_map_ : every_row(keys_.dim(0));
      copy_steps(keys_, rows, steps_, new_keys);
      copy_steps(values_, rows, steps_, new_values);
    }
    keys_ = std::move(new_keys);
    values_ = std::move(new_values);
    row_map_.reset();
  }
  write_step(step_keys, steps_, keys_);
  write_step(step_values, steps_, values_);
  ++steps_;
}

void KvCache::select_rows(const std::vector<int64_t>& rows) {
  if (empty()) return;
  // A second reorder picks among the first's rows.
  row_map_ = layers::select_rows(row_map_ ? *row_map_ : every_row(keys_.dim(0)), rows);
}

}  // namespace attn::layers
