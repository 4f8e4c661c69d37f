#include "layers/kv_cache.h"

#include <cstring>

#include "core/parallel.h"
#include "layers/row_gather.h"

namespace attn::layers {

Tensor append_time(const Tensor& x, const std::vector<int64_t>& rows, const Tensor& step) {
  const int64_t kept = static_cast<int64_t>(rows.size());
  ATTN_CHECK(
      x.rank() == 4 && step.rank() == 4 && step.dim(0) == kept && x.dim(1) == step.dim(1) && x.dim(3) == step.dim(3),
      "append_time: ", to_string(x.shape()), " (", kept, " rows of it) and ", to_string(step.shape()));
  const int64_t heads = x.dim(1), width = x.dim(3);
  const int64_t old_len = x.dim(2), step_len = step.dim(2), new_len = old_len + step_len;
  Tensor result = Tensor::empty({kept, heads, new_len, width});
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
  return result;
}

Tensor append_time(const Tensor& x, const Tensor& step) {
  std::vector<int64_t> every_row(static_cast<size_t>(x.rank() == 4 ? x.dim(0) : 0));
  for (size_t b = 0; b < every_row.size(); ++b) every_row[b] = static_cast<int64_t>(b);
  return append_time(x, every_row, step);
}

void KvCache::append(const Tensor& step_keys, const Tensor& step_values) {
  if (empty()) {
    keys = step_keys.detach();
    values = step_values.detach();
  } else if (pending_rows_) {
    keys = append_time(keys, *pending_rows_, step_keys);
    values = append_time(values, *pending_rows_, step_values);
  } else {
    keys = append_time(keys, step_keys);
    values = append_time(values, step_values);
  }
  pending_rows_.reset();
}

void KvCache::select_rows(const std::vector<int64_t>& rows) {
  ATTN_CHECK(!pending_rows_, "kv cache: a deferred reorder is still waiting for its append");
  if (empty()) return;
  keys = layers::select_rows(keys, rows);
  values = layers::select_rows(values, rows);
}

void KvCache::defer_select_rows(const std::vector<int64_t>& rows) {
  if (empty()) return;
  // Two reorders with no append between them compose: the second picks among the first's rows.
  pending_rows_ = pending_rows_ ? layers::select_rows(*pending_rows_, rows) : rows;
}

}  // namespace attn::layers
