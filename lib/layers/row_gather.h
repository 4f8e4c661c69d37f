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
// into a new tensor, with no gradient. Any dtype.
Tensor select_rows(const Tensor& x, const std::vector<int64_t>& rows);
// The same gather into `result`, of x's dtype and gathered_shape(x, rows.size()).
void select_rows_into(const Tensor& x, const std::vector<int64_t>& rows, Tensor& result);
// x's shape with `count` rows on axis 0: what a gather of `count` rows makes.
Shape gathered_shape(const Tensor& x, size_t count);

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

// Which source sentence each row of a decoding state belongs to. A state's source-side tensors
// (the encoder output, its projected keys, masks, lengths) hold the same values in every row of
// one sentence, so a reorder that leaves every row on a row of the same sentence leaves them as
// they are. That is beam search's usual step (each sentence keeps its K beams, in any order):
// it then moves no source-side bytes, where a gather copied them all (the source length times
// the model width, per row and layer).
class SourceRows {
 public:
  explicit SourceRows(int64_t sentences = 0);  // row i is sentence i

  // Applies a reorder (the rows kept, in order, repeats allowed); true when the source-side
  // tensors must be gathered with it because some row now belongs to another sentence.
  bool reorder(const std::vector<int64_t>& rows);
  int64_t size() const { return static_cast<int64_t>(sentence_of_row_.size()); }

 private:
  std::vector<int64_t> sentence_of_row_;
};

}  // namespace attn::layers
