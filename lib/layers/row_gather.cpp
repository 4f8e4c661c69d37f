#include "layers/row_gather.h"

#include <cstring>

namespace attn::layers {

Tensor select_rows(const Tensor& x, const std::vector<int64_t>& rows) {
  Shape shape = x.shape();
  int64_t row_size = x.numel() / shape[0];
  shape[0] = static_cast<int64_t>(rows.size());
  Tensor result = Tensor::empty(shape);
  const float* source = x.data();
  float* target = result.data();
  for (size_t i = 0; i < rows.size(); ++i) {
    ATTN_CHECK(rows[i] >= 0 && rows[i] < x.dim(0), "select_rows: row ", rows[i], " of ", to_string(x.shape()));
    std::memcpy(target + i * row_size, source + rows[i] * row_size, row_size * sizeof(float));
  }
  return result;
}

}  // namespace attn::layers
