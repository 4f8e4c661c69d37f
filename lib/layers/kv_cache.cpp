#include "layers/kv_cache.h"

#include <algorithm>
#include <cstring>

#include "core/parallel.h"
#include "layers/row_gather.h"

namespace attn::layers {

namespace {

// The shape of rows `rows` of x with step appended: (B', H, t + s, Dh).
Shape appended_shape(const Tensor& x, const std::vector<int64_t>& rows, const Tensor& step) {
  const int64_t kept = static_cast<int64_t>(rows.size());
  ATTN_CHECK(
      x.rank() == 4 && step.rank() == 4 && step.dim(0) == kept && x.dim(1) == step.dim(1) && x.dim(3) == step.dim(3),
      "append_time: ", to_string(x.shape()), " (", kept, " rows of it) and ", to_string(step.shape()));
  return {kept, x.dim(1), x.dim(2) + step.dim(2), x.dim(3)};
}

std::vector<int64_t> every_row(const Tensor& x) {
  std::vector<int64_t> rows(static_cast<size_t>(x.rank() == 4 ? x.dim(0) : 0));
  for (size_t b = 0; b < rows.size(); ++b) rows[b] = static_cast<int64_t>(b);
  return rows;
}

// Room for a quarter more steps (8 at least) than `shape` holds: a storage then serves several
// steps before it has to grow, and a long search holds at most 2.5x its cache.
size_t growing_reserve(const Shape& shape) {
  const int64_t steps = shape[2];
  return size_t(numel(shape) / steps * (steps + std::max<int64_t>(8, steps / 4))) * sizeof(float);
}

// Rows `rows` of x (B', H, t, Dh) with step (B', H, s, Dh) appended along the time axis, into
// result (B', H, t + s, Dh).
void append_time_into(const Tensor& x, const std::vector<int64_t>& rows, const Tensor& step, Tensor& result) {
  ATTN_CHECK(result.shape() == appended_shape(x, rows, step), "append_time: into ", to_string(result.shape()));
  const int64_t kept = result.dim(0), heads = x.dim(1), width = x.dim(3);
  const int64_t old_len = x.dim(2), step_len = step.dim(2), new_len = old_len + step_len;
  const float* old_values = x.data();
  const float* step_values = step.data();
  float* target = result.data();
  for (int64_t row : rows)
    ATTN_CHECK(row >= 0 && row < x.dim(0), "append_time: row ", row, " of ", to_string(x.shape()));
    // A beam step copies every layer's whole cache: memory-bound, so both cores copy.
#pragma omp parallel for if (result.numel() > kParallelWork) schedule(static)
  for (int64_t b = 0; b < kept; ++b) {
    for (int64_t h = 0; h < heads; ++h) {
      float* plane = target + (b * heads + h) * new_len * width;
      std::memcpy(plane, old_values + (rows[b] * heads + h) * old_len * width, old_len * width * sizeof(float));
      std::memcpy(plane + old_len * width, step_values + (b * heads + h) * step_len * width,
                  step_len * width * sizeof(float));
    }
  }
}

}  // namespace

Tensor StoragePair::next(const Shape& shape, DType dtype, size_t reserve_bytes) {
  const size_t bytes = size_t(numel(shape)) * dtype_size(dtype);
  BufferPtr& storage = storage_[next_];
  next_ = 1 - next_;
  if (!storage || storage->bytes() < bytes || storage.use_count() > 1) {
    storage.reset();  // back to the pool before the new one is taken
    storage = std::make_shared<Buffer>(std::max(bytes, reserve_bytes), false);
  }
  return Tensor::view_of(storage, nullptr, 0, shape, dtype);
}

void KvCache::append(const Tensor& step_keys, const Tensor& step_values) {
  if (empty()) {
    keys = step_keys.detach();
    values = step_values.detach();
  } else {
    const std::vector<int64_t> rows = pending_rows_ ? *pending_rows_ : every_row(keys);
    const Shape shape = appended_shape(keys, rows, step_keys);
    const size_t reserve = growing_reserve(shape);
    Tensor new_keys = key_storage_.next(shape, DType::f32, reserve);
    Tensor new_values = value_storage_.next(shape, DType::f32, reserve);
    append_time_into(keys, rows, step_keys, new_keys);
    append_time_into(values, rows, step_values, new_values);
    keys = std::move(new_keys);
    values = std::move(new_values);
  }
  pending_rows_.reset();
}

void KvCache::select_rows(const std::vector<int64_t>& rows) {
  ATTN_CHECK(!pending_rows_, "kv cache: a deferred reorder is still waiting for its append");
  if (empty()) return;
  auto gather = [&rows](const Tensor& x, StoragePair& storage) {
    Tensor result = storage.next(gathered_shape(x, rows.size()), x.dtype(), 0);
    layers::select_rows_into(x, rows, result);
    return result;
  };
  keys = gather(keys, key_storage_);
  values = gather(values, value_storage_);
}

void KvCache::defer_select_rows(const std::vector<int64_t>& rows) {
  if (empty()) return;
  // Two reorders with no append between them compose: the second picks among the first's rows.
  pending_rows_ = pending_rows_ ? layers::select_rows(*pending_rows_, rows) : rows;
}

}  // namespace attn::layers
