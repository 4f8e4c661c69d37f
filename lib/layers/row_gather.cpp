#include "layers/row_gather.h"

#include <cstring>

#include "core/parallel.h"

namespace attn::layers {

Tensor select_rows(const Tensor& x, const std::vector<int64_t>& rows) {
  Shape shape = x.shape();
  int64_t row_size = x.numel() / shape[0];
  shape[0] = static_cast<int64_t>(rows.size());
  Tensor result = Tensor::empty(shape);
  const float* source = x.data();
  float* target = result.data();
  for (int64_t row : rows)
    ATTN_CHECK(row >= 0 && row < x.dim(0), "select_rows: row ", row, " of ", to_string(x.shape()));
  const int64_t count = static_cast<int64_t>(rows.size());
#pragma omp parallel for if (result.numel() > kParallelWork) schedule(static)
  for (int64_t i = 0; i < count; ++i)
    std::memcpy(target + i * row_size, source + rows[i] * row_size, row_size * sizeof(float));
  return result;
}

SourceRows::SourceRows(int64_t sentences) : sentence_of_row_(static_cast<size_t>(sentences)) {
  for (int64_t i = 0; i < sentences; ++i) sentence_of_row_[i] = i;
}

bool SourceRows::reorder(const std::vector<int64_t>& rows) {
  std::vector<int64_t> reordered = select_rows(sentence_of_row_, rows);
  bool moved = reordered != sentence_of_row_;
  sentence_of_row_ = std::move(reordered);
  return moved;
}

}  // namespace attn::layers
