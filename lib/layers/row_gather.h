#pragma once
// Row gathers along axis 0: how a decoding state keeps, drops and repeats its rows (sentence x
// beam hypothesis) when beam search reorders them. One home for tensors and for the values a
// state keeps per row (source lengths).
#include <cstdint>
#include <vector>

#include "core/check.h"
#include "core/tensor.h"

namespace attn::layers {

// Rows `rows` of x along axis 0, in that order, repeats allowed: a gather of whole sub-tensors
// into a new tensor, with no gradient.
Tensor select_rows(const Tensor& x, const std::vector<int64_t>& rows);

// The same gather for one value per row.
template <class T>
std::vector<T> select_rows(const std::vector<T>& x, const std::vector<int64_t>& rows) {
  std::vector<T> result;
  result.reserve(rows.size());
  for (int64_t row : rows) {
    ATTN_CHECK(row >= 0 && row < static_cast<int64_t>(x.size()), "select_rows: row ", row, " of ", x.size());
    result.push_back(x[row]);
  }
  return result;
}

}  // namespace attn::layers
