#include "layers/embedding.h"

#include <cmath>

#include "ops/embedding.h"

namespace attn::layers {

Embedding::Embedding(ParameterStore& store, const std::string& name, int64_t vocab_size, int64_t width,
                     int32_t padding_id)
    : table_(store.add(name + ".weight", {vocab_size, width}, init::normal(1.f / std::sqrt(float(width))))),
      padding_id_(padding_id) {}

Tensor Embedding::operator()(Tape& tape, const std::vector<int32_t>& ids, const Shape& ids_shape) const {
  if (!table_.has_values() && tied_ && tied_->packed) return ops::embedding_from_packed(*tied_, ids, ids_shape);
  return ops::embedding(tape, table_, ids, ids_shape, padding_id_);
}

}  // namespace attn::layers
