#include "layers/kv_cache.h"

#include <cstring>

#include "layers/row_gather.h"

namespace attn::layers {

namespace {

std::vector<int64_t> every_row(int64_t count) {
  std::vector<int64_t> rows(static_cast<size_t>(count));
  for (size_t b = 0; b < rows.size(); ++b) rows[b] = static_cast<int64_t>(b);
  return rows;
}

// Time positions [0, T) of `into` (R, H, T, Dh): for each row r and position t, the Dh values
// that `source(r, t, h)` points at. Any dtype.
template <class Source>
Tensor gathered(const Shape& shape, DType dtype, const Source& source) {
  Tensor into = Tensor::empty(shape, dtype);  // (R, H, T, Dh)
  const int64_t heads = shape[1], steps = shape[2];
  const size_t position_bytes = size_t(shape[3]) * dtype_size(dtype);
  char* target = static_cast<char*>(into.raw());
  for (int64_t r = 0; r < shape[0]; ++r)
    for (int64_t h = 0; h < heads; ++h)
      for (int64_t t = 0; t < steps; ++t)
        std::memcpy(target + ((r * heads + h) * steps + t) * position_bytes, source(r, t, h), position_bytes);
  return into;
}

}  // namespace

KvCache::KvCache(Tensor keys, Tensor values) : memory_keys_(std::move(keys)), memory_values_(std::move(values)) {
  ATTN_CHECK(memory_keys_.rank() == 4 && memory_values_.shape() == memory_keys_.shape(), "kv cache: keys ",
             to_string(memory_keys_.shape()), " and values ", to_string(memory_values_.shape()), " differ");
}

int64_t KvCache::steps() const { return is_memory() ? memory_keys_.dim(2) : int64_t(step_keys_.size()); }

int64_t KvCache::rows() const {
  if (is_memory()) return row_map_ ? int64_t(row_map_->size()) : memory_keys_.dim(0);
  return empty() ? 0 : int64_t(step_rows_.size()) / steps();
}

ops::KeyValues KvCache::entries() const {
  if (is_memory()) return {memory_keys_, memory_values_, steps(), row_map_ ? &*row_map_ : nullptr};
  ops::KeyValues entries;
  entries.length = steps();
  entries.step_keys = &step_keys_;
  entries.step_values = &step_values_;
  entries.step_rows = &step_rows_;
  return entries;
}

Tensor KvCache::keys() const {
  if (is_memory() && !row_map_) return memory_keys_;
  return gathered_cache(true);
}

Tensor KvCache::values() const {
  if (is_memory() && !row_map_) return memory_values_;
  return gathered_cache(false);
}

Tensor KvCache::gathered_cache(bool keys) const {
  if (empty()) return {};
  const int64_t cache_rows = rows(), steps = this->steps();
  if (is_memory()) {  // (B, H, S, Dh) through the row map
    const Tensor& memory = keys ? memory_keys_ : memory_values_;
    const int64_t heads = memory.dim(1), width = memory.dim(3);
    const size_t position_bytes = size_t(width) * dtype_size(memory.dtype());
    const char* base = static_cast<const char*>(memory.raw());
    return gathered({cache_rows, heads, steps, width}, memory.dtype(), [&](int64_t r, int64_t t, int64_t h) {
      return base + (((*row_map_)[size_t(r)] * heads + h) * steps + t) * position_bytes;
    });
  }
  const std::vector<Tensor>& by_step = keys ? step_keys_ : step_values_;  // (R_t, H, 1, Dh) each
  const int64_t heads = by_step.front().dim(1), width = by_step.front().dim(3);
  return gathered({cache_rows, heads, steps, width}, DType::f32, [&](int64_t r, int64_t t, int64_t h) {
    return by_step[size_t(t)].data() + (int64_t(step_rows_[size_t(t * cache_rows + r)]) * heads + h) * width;
  });
}

void KvCache::append(Tensor step_keys, Tensor step_values) {
  ATTN_CHECK(!is_memory(), "kv cache: cross-attention's memory ", to_string(memory_keys_.shape()),
             " takes no decoding steps");
  ATTN_CHECK(step_keys.rank() == 4 && step_keys.dim(2) == 1 && step_values.shape() == step_keys.shape() &&
                 step_keys.dtype() == DType::f32 && step_values.dtype() == DType::f32,
             "kv cache: a step's keys ", to_string(step_keys.shape()), " and values ", to_string(step_values.shape()),
             " must be (B, H, 1, Dh), f32");
  const int64_t step_rows = step_keys.dim(0);
  if (!empty()) {  // the step's rows are the cache's after its reorders
    const Tensor& last = step_keys_.back();
    ATTN_CHECK(step_rows == rows() && step_keys.dim(1) == last.dim(1) && step_keys.dim(3) == last.dim(3),
               "kv cache: a step ", to_string(step_keys.shape()), " for ", rows(), " rows of steps like ",
               to_string(last.shape()));
  }
  for (int64_t r = 0; r < step_rows; ++r) step_rows_.push_back(int32_t(r));
  step_keys_.push_back(std::move(step_keys));
  step_values_.push_back(std::move(step_values));
}

void KvCache::select_rows(const std::vector<int64_t>& rows) {
  if (empty()) return;
  if (is_memory()) {  // a second reorder picks among the first's rows
    row_map_ = layers::select_rows(row_map_ ? *row_map_ : every_row(memory_keys_.dim(0)), rows);
    return;
  }
  const int64_t before = this->rows(), kept = int64_t(rows.size());
  for (int64_t row : rows) ATTN_CHECK(row >= 0 && row < before, "kv cache: row ", row, " of ", before, " rows");
  std::vector<int32_t> lineage(size_t(steps() * kept));  // (steps, kept)
  for (int64_t t = 0; t < steps(); ++t)
    for (int64_t r = 0; r < kept; ++r) lineage[size_t(t * kept + r)] = step_rows_[size_t(t * before + rows[r])];
  step_rows_ = std::move(lineage);
}

}  // namespace attn::layers
