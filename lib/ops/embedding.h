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

// The same lookup, without a gradient, from the packed copy of a tied table `weight` (V, D),
// whose own values a decoding store dropped (ParameterStore::prepare_for_decoding): the rows
// the output projection multiplies with. In f32 the table's values exactly; in bf16 and int8
// their rounded and quantised forms, as the products see them.
Tensor embedding_from_packed(const MatmulWeight& weight, const std::vector<int32_t>& ids, const Shape& ids_shape);

}  // namespace attn::ops
