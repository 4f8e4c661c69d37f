#include "layers/kv_cache.h"

#include <cstring>

#include "layers/row_gather.h"

namespace attn::layers {

Tensor append_time(const Tensor& x, const Tensor& step) {
  ATTN_CHECK(x.rank() == 4 && step.rank() == 4 && x.dim(0) == step.dim(0) && x.dim(1) == step.dim(1) &&
                 x.dim(3) == step.dim(3),
             "append_time: ", to_string(x.shape()), " and ", to_string(step.shape()));
  int64_t planes = x.dim(0) * x.dim(1), width = x.dim(3);
  int64_t old_len = x.dim(2), step_len = step.dim(2), new_len = old_len + step_len;
  Tensor result = Tensor::empty({x.dim(0), x.dim(1), new_len, width});
  const float* old_values = x.data();
  const float* step_values = step.data();
  float* target = result.data();
  for (int64_t p = 0; p < planes; ++p) {
    std::memcpy(target + p * new_len * width, old_values + p * old_len * width, old_len * width * sizeof(float));
    std::memcpy(target + (p * new_len + old_len) * width, step_values + p * step_len * width,
                step_len * width * sizeof(float));
  }
  return result;
}

void KvCache::append(const Tensor& step_keys, const Tensor& step_values) {
  keys = empty() ? step_keys.detach() : append_time(keys, step_keys);
  values = values.defined() ? append_time(values, step_values) : step_values.detach();
}

void KvCache::select_rows(const std::vector<int64_t>& rows) {
  if (empty()) return;
  keys = layers::select_rows(keys, rows);
  values = layers::select_rows(values, rows);
}

}  // namespace attn::layers
