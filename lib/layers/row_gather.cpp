#include "layers/row_gather.h"

#include <cstring>

#include "core/parallel.h"

namespace attn::layers {

Shape gathered_shape(const Tensor& x, size_t count) {
  Shape shape = x.shape();
  shape[0] = static_cast<int64_t>(count);
  return shape;
}

Tensor select_rows(const Tensor& x, const std::vector<int64_t>& rows) {
  Tensor result = Tensor::empty(gathered_shape(x, rows.size()), x.dtype());
  select_rows_into(x, rows, result);
  return result;
}

void select_rows_into(const Tensor& x, const std::vector<int64_t>& rows, Tensor& result) {
  const int64_t count = static_cast<int64_t>(rows.size());
  ATTN_CHECK(result.dtype() == x.dtype() && result.shape() == gathered_shape(x, rows.size()), "select_rows: ", count,
             " rows of ", to_string(x.shape()), " into ", to_string(result.shape()));
  for (int64_t row : rows)
    ATTN_CHECK(row >= 0 && row < x.dim(0), "select_rows: row ", row, " of ", to_string(x.shape()));
  if (count == 0) return;
  const size_t row_bytes = size_t(x.numel() / x.dim(0)) * dtype_size(x.dtype());
  const char* source = static_cast<const char*>(x.raw());
  char* target = static_cast<char*>(result.raw());
  parallel_for(count, result.numel() / count, [&](int64_t first, int64_t last) {
    for (int64_t i = first; i < last; ++i) std::memcpy(target + i * row_bytes, source + rows[i] * row_bytes, row_bytes);
  });
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
