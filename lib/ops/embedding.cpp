#include "ops/embedding.h"

#include <algorithm>
#include <cstring>

#include "core/parallel.h"
#include "ops/gemm.h"

namespace attn::ops {

namespace {

// Columns per backward work item: enough for a vector loop, few enough to spread over threads.
constexpr int64_t kColumnBlock = 64;

void check_ids(const std::vector<int32_t>& ids, const Shape& ids_shape, int64_t vocabulary) {
  ATTN_CHECK(static_cast<int64_t>(ids.size()) == numel(ids_shape), "embedding: ", ids.size(),
             " ids do not fill ids shape ", to_string(ids_shape));
  for (int32_t id : ids) {
    ATTN_CHECK(id >= 0 && id < vocabulary, "embedding: id ", id, " out of range for a vocabulary of V=", vocabulary);
  }
}

// Backward of y[n] = table[ids[n]]:
//   dtable[v] += sum over n with ids[n] == v (and v != padding_id) of dy[n]
// Repeated ids add into one row, so threads split the columns (never the rows): each piece
// owns column blocks of every table row, which is race-free and sums in a fixed order.
void embedding_backward(const Tensor& table, const std::vector<int32_t>& ids, int32_t padding_id, const Tensor& y) {
  if (!y.has_grad() || !table.requires_grad()) return;
  int64_t width = table.dim(1);
  int64_t rows = static_cast<int64_t>(ids.size());
  const float* dy = y.grad().data();    // (N, D)
  float* dtable = table.grad().data();  // (V, D)
  int64_t blocks = (width + kColumnBlock - 1) / kColumnBlock;
  parallel_for(blocks, rows * kColumnBlock, [&](int64_t first, int64_t last) {
    for (int64_t block = first; block < last; ++block) {
      int64_t begin = block * kColumnBlock, end = std::min(width, begin + kColumnBlock);
      for (int64_t n = 0; n < rows; ++n) {
        if (ids[n] == padding_id) continue;
        float* target = dtable + int64_t(ids[n]) * width;
        const float* source = dy + n * width;
#pragma omp simd
        for (int64_t j = begin; j < end; ++j) target[j] += source[j];
      }
    }
  });
}

}  // namespace

Tensor embedding(Tape& tape, const Tensor& table, const std::vector<int32_t>& ids, const Shape& ids_shape,
                 int32_t padding_id) {
  ATTN_CHECK(table.rank() == 2, "embedding: table must be (V, D), got ", to_string(table.shape()));
  check_ids(ids, ids_shape, table.dim(0));
  int64_t width = table.dim(1);
  int64_t rows = static_cast<int64_t>(ids.size());
  Tensor y = Tensor::empty({rows, width});  // (N, D)
  const float* source = table.data();
  float* target = y.data();
  parallel_for(rows, width, [&](int64_t first, int64_t last) {
    for (int64_t n = first; n < last; ++n)
      std::memcpy(target + n * width, source + int64_t(ids[n]) * width, width * sizeof(float));
  });

  if (tape.needs_grad(table)) {
    y.set_requires_grad(true);
    tape.record([table, ids, padding_id, y = y.grad_only()] { embedding_backward(table, ids, padding_id, y); });
  }
  Shape shape = ids_shape;
  shape.push_back(width);
  return y.view(shape);
}

Tensor embedding_from_packed(const MatmulWeight& weight, const std::vector<int32_t>& ids, const Shape& ids_shape) {
  ATTN_CHECK(weight.packed, "embedding: the tied table has no packed copy to read rows from");
  const Shape& table_shape = weight.f32.shape();  // (V, D)
  check_ids(ids, ids_shape, table_shape[0]);
  Tensor y = Tensor::empty({static_cast<int64_t>(ids.size()), table_shape[1]});  // (N, D)
  const float* row_scales = weight.precision == Precision::int8 ? weight.int8.scales.data() : nullptr;
  packed_rows(*weight.packed, ids, y.data(), row_scales);
  Shape shape = ids_shape;
  shape.push_back(table_shape[1]);
  return y.view(shape);
}

}  // namespace attn::ops
