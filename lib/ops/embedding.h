#pragma once
// embedding: row lookup y[n] = table[ids[n]], the first layer of every model.
//
// Shapes: table (V, D), ids numel(ids_shape) entries -> y (ids_shape..., D).
// V vocabulary, D width, N = numel(ids_shape) looked-up rows.
#include <cstdint>
#include <vector>

#include "autograd/tape.h"
#include "core/matmul_weight.h"
#include "core/tensor.h"

namespace attn::ops {

// Rows whose id equals padding_id are looked up as usual but never receive a gradient, so a
// padding embedding stays where it was initialised (zero). -1 means no padding id.
Tensor embedding(Tape& tape, const Tensor& table, const std::vector<int32_t>& ids, const Shape& ids_shape,
                 int32_t padding_id = -1);

// The same lookup, without a gradient, from the packed copy of an f32 table of `table_shape`
// (V, D), whose own values a decoding store dropped (ParameterStore::prepare_for_decoding): a tied
// table, packed for the output projection. The values are the table's exactly.
Tensor embedding_from_packed(const Shape& table_shape, const PackedMatrix& packed, const std::vector<int32_t>& ids,
                             const Shape& ids_shape);

}  // namespace attn::ops
